package requestlog

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLog_KeepsTheLastEntriesOfEachAPINewestFirst(t *testing.T) {
	l := New(3)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 5 {
		l.Add(Entry{Time: t0.Add(time.Duration(i) * time.Second), API: "pam", Path: fmt.Sprint("/p", i), Status: 200})
	}
	l.Add(Entry{Time: t0.Add(10 * time.Second), API: "fax", Path: "/f", Status: 429})

	pam := l.Recent(Filter{API: "pam"})
	require.Len(t, pam, 3)
	assert.Equal(t, []string{"/p4", "/p3", "/p2"}, []string{pam[0].Path, pam[1].Path, pam[2].Path})

	all := l.Recent(Filter{})
	require.Len(t, all, 4)
	assert.Equal(t, "/f", all[0].Path)
}

func TestLog_Filter(t *testing.T) {
	l := New(0)
	t0 := time.Now()
	l.Add(Entry{Time: t0, API: "pam", Operation: "ListGroups", Status: 200})
	l.Add(Entry{Time: t0.Add(time.Millisecond), API: "pam", Operation: "CreateGroup", Status: 409})
	l.Add(Entry{Time: t0.Add(2 * time.Millisecond), API: "pam", Operation: "ListGroups", Status: 500, Violations: []string{"body: missing property"}})

	tests := []struct {
		name   string
		filter Filter
		want   []int
	}{
		{"operation", Filter{Operation: "ListGroups"}, []int{500, 200}},
		{"client errors", Filter{MinStatus: 400, MaxStatus: 499}, []int{409}},
		{"violations", Filter{ViolationsOnly: true}, []int{500}},
		{"limit", Filter{Limit: 1}, []int{500}},
		{"other api", Filter{API: "fax"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int
			for _, e := range l.Recent(tt.filter) {
				got = append(got, e.Status)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestLog_ConcurrentAdds(t *testing.T) {
	l := New(100)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				l.Add(Entry{Time: time.Now(), API: fmt.Sprint("api", g%2), Status: 200 + i%2})
			}
		})
	}
	wg.Wait()
	assert.Len(t, l.Recent(Filter{}), 200)
}

func TestLog_AddViolationsReachesTheEntryByID(t *testing.T) {
	l := New(2)
	t0 := time.Now()
	l.Add(Entry{ID: 1, Time: t0, API: "pam", Status: 200})
	l.Add(Entry{ID: 2, Time: t0.Add(time.Millisecond), API: "pam", Status: 200, Violations: []string{"first"}})
	before := l.Recent(Filter{API: "pam"})

	assert.True(t, l.AddViolations("pam", 2, "second"))
	assert.True(t, l.AddViolations("pam", 1, "only"))
	assert.False(t, l.AddViolations("fax", 1, "no such api"), "another API's entry")
	assert.False(t, l.AddViolations("pam", 0, "no id"))
	l.Add(Entry{ID: 3, Time: t0.Add(2 * time.Millisecond), API: "pam", Status: 200})
	assert.False(t, l.AddViolations("pam", 1, "gone"), "entry 1 left the ring")

	got := l.Recent(Filter{API: "pam", ViolationsOnly: true})
	require.Len(t, got, 1)
	assert.Equal(t, []string{"first", "second"}, got[0].Violations)
	assert.Equal(t, []string{"first"}, before[0].Violations, "a copy handed out earlier is unchanged")
}
