-- Schema version 10: memory vectors for hybrid (lexical + meaning) search.
--
-- One vector per memory, for the model that made it: int8 components (`vector`, `dim` bytes)
-- times `scale` give the L2-normalised embedding. A vector of another model than the configured
-- one is ignored and replaced in the background; deleting a memory deletes its vector.

CREATE TABLE memory_vectors (
    memory_id  INTEGER PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    model      TEXT    NOT NULL,
    dim        INTEGER NOT NULL,
    scale      REAL    NOT NULL,
    vector     BLOB    NOT NULL
);

CREATE INDEX memory_vectors_model ON memory_vectors (model);
