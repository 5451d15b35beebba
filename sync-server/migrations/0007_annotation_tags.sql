-- The tags an annotator gave their own version of an overlap run, handed in with it (a JSON
-- array; NULL when they gave none). The resolution adds them to the run's.
ALTER TABLE annotation_sets ADD COLUMN tags TEXT;
