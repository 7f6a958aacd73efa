package sqldb

// PendingWrites returns how many writes wait in d's group commit, queued or
// being committed.
func PendingWrites(d *DB) int { return int(d.pending.Load()) }

// QueuedWrites returns how many writes wait in d's group commit for a batch
// to take them (not those of a batch on its way).
func QueuedWrites(d *DB) int {
	d.group.mu.Lock()
	defer d.group.mu.Unlock()
	return len(d.group.waiting)
}
