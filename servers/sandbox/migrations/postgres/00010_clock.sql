-- +goose Up
-- The sandbox's own clock. Its time is clock_base while the clock is
-- 'frozen', and clock_base plus the stack time passed since clock_ref while
-- it is 'real' (Unix microseconds both; clock_base is the sandbox's time,
-- clock_ref the stack's). clock_due is set with every advance to the time
-- whose due work has yet to run, and cleared once it has: while the replica
-- that advanced holds clock_lease (stack time), it runs that work; after,
-- any replica does (the advancing one died).
ALTER TABLE sandboxes ADD COLUMN clock_base BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sandboxes ADD COLUMN clock_ref BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sandboxes ADD COLUMN clock_due BIGINT NULL;
ALTER TABLE sandboxes ADD COLUMN clock_lease BIGINT NOT NULL DEFAULT 0;
UPDATE sandboxes SET clock_base = created_at, clock_ref = created_at;

-- +goose Down
ALTER TABLE sandboxes DROP COLUMN clock_lease;
ALTER TABLE sandboxes DROP COLUMN clock_due;
ALTER TABLE sandboxes DROP COLUMN clock_ref;
ALTER TABLE sandboxes DROP COLUMN clock_base;
