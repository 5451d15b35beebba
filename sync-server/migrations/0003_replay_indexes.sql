-- The replay records are pruned by age (`Store::prune`); without these indexes each prune
-- read the whole table.

CREATE INDEX mutations_by_created ON mutations (created_at);
CREATE INDEX idempotency_by_created ON idempotency (created_at);
