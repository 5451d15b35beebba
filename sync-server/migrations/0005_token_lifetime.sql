-- A user's bearer token can expire, be revoked, and be replaced (rotated). `token_hash`
-- stays the only token a user has; these say since when it was issued, until when it is
-- valid (NULL: no end), and whether it was revoked (NULL: not).

ALTER TABLE users ADD COLUMN token_issued_at TEXT;
ALTER TABLE users ADD COLUMN token_expires_at TEXT;
ALTER TABLE users ADD COLUMN token_revoked_at TEXT;
