package sqldb

// PendingWrites returns how many writes wait in d's group commit, queued or
// being committed.
func PendingWrites(d *DB) int { return int(d.pending.Load()) }
