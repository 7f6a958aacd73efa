package sandbox

import (
	"github.com/apistack/apistack/gen/sandboxapi"
	"github.com/apistack/apistack/servers/internal/apiserver"
)

// localJournal keeps, in memory, the requests of one tenant set that is no
// sandbox's: the test kit's own tenants (apistacktest), so that a test
// reads what its code sent the same way in process and against a running
// stack (ListSandboxRequests).
type localJournal struct {
	set     string
	entries []apiserver.JournalEntry
}

// KeepLocal makes the journal keep the requests of the tenant set named
// set, a set that is no sandbox's, in memory from now on (Local lists
// them). Only one set is kept; "" stops keeping.
func (j *Journal) KeepLocal(set string) {
	j.localMu.Lock()
	defer j.localMu.Unlock()
	j.local = localJournal{set: set}
	j.localSet.Store(&j.local.set)
}

// keptLocally reports whether set is the one KeepLocal named.
func (j *Journal) keptLocally(set string) bool {
	p := j.localSet.Load()
	return p != nil && *p != "" && *p == set
}

// recordLocal keeps e, redacted, when it is of the local set, and reports
// whether it was.
func (j *Journal) recordLocal(e apiserver.JournalEntry) bool {
	if !j.keptLocally(e.Set) {
		return false
	}
	e.Redact()
	j.localMu.Lock()
	defer j.localMu.Unlock()
	if e.Set == j.local.set {
		j.local.entries = append(j.local.entries, e)
	}
	return true
}

// Local lists the requests KeepLocal kept, filtered and paged as
// ListSandboxRequests filters and pages a sandbox's journal (an entry's
// seq is its place, from 1).
func (j *Journal) Local(p sandboxapi.ListSandboxRequestsParams) sandboxapi.JournalPage {
	f := filterOf(p)
	j.localMu.Lock()
	entries := j.local.entries
	j.localMu.Unlock()
	page := sandboxapi.JournalPage{Data: []sandboxapi.JournalEntry{}}
	for i, e := range entries {
		seq := int64(i + 1)
		if seq <= f.After || !f.matches(e) {
			continue
		}
		if len(page.Data) == f.Limit {
			last := page.Data[len(page.Data)-1].Seq
			page.NextAfter = &last
			break
		}
		page.Data = append(page.Data, entryView(storedEntry{Seq: seq, JournalEntry: e}))
	}
	return page
}
