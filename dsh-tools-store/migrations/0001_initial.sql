-- dsh-tools-store schema, version 1. Every `value` is a sealed record (HMAC tag + JSON): the
-- other columns only index it. Applied once, in a transaction, by the first process that
-- opens the store (dsh_store_migrations records it).
CREATE TABLE dsh_store_runs (
    id TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    finished BOOLEAN NOT NULL DEFAULT FALSE,
    expires_ms BIGINT
);
CREATE INDEX dsh_store_runs_open ON dsh_store_runs (id) WHERE NOT finished;
CREATE TABLE dsh_store_entries (
    run_id TEXT NOT NULL REFERENCES dsh_store_runs (id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (run_id, id)
);
CREATE TABLE dsh_store_intents (
    run_id TEXT NOT NULL REFERENCES dsh_store_runs (id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (run_id, id)
);
CREATE TABLE dsh_store_checkpoints (
    run_id TEXT NOT NULL REFERENCES dsh_store_runs (id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (run_id, id)
);
CREATE TABLE dsh_store_spent (
    id TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    expires_ms BIGINT
);
CREATE TABLE dsh_store_approvals (
    id TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    expires_ms BIGINT
);
CREATE TABLE dsh_store_tasks (
    id TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    expires_ms BIGINT
);
