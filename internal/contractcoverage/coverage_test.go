//go:build contractcoverage

package contractcoverage

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestContractCoverage compares the pairs the whole test run recorded with
// what each spec declares: a declared pair that no test produced fails,
// unless testdata/contract/unreachable.yaml says why none can; a listed pair
// that a test did produce fails too, so the list never goes stale.
// testdata/contract/untested.yaml is the shrinking list of reachable pairs
// no test produces yet: it only lets the check pass while they are written,
// and a pair in it that a test produces must be taken out. It runs
// after every package (`make test`), reading the directory they recorded in.
func TestContractCoverage(t *testing.T) {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: run `make test`, which records the pairs of every package and then runs this test", EnvDir)
		}
		t.Skipf("%s is not set: `make test` records the pairs of every package and then runs this test", EnvDir)
	}
	covered, err := ReadDir(dir)
	require.NoError(t, err)
	unreachable, err := ReadUnreachable(unreachableFile)
	require.NoError(t, err)
	untested, err := ReadUnreachable(untestedFile)
	require.NoError(t, err)
	coveredFields, err := ReadFieldsDir(dir)
	require.NoError(t, err)
	unreachableFields, err := ReadUnreachableFields(unreachableFile)
	require.NoError(t, err)
	untestedFields, err := ReadUnreachableFields(untestedFile)
	require.NoError(t, err)

	apis := make([]string, 0, len(APIs))
	for api := range APIs {
		apis = append(apis, api)
	}
	sort.Strings(apis)
	for _, api := range apis {
		t.Run(api, func(t *testing.T) {
			declared, err := Declared(api)
			require.NoError(t, err)
			var hit, excused, todo int
			var missing, stale, done []string
			for _, p := range declared {
				_, isUnreachable := unreachable[p]
				_, isUntested := untested[p]
				switch {
				case covered[p] && isUnreachable:
					stale = append(stale, p.String())
					hit++
				case covered[p] && isUntested:
					done = append(done, p.String())
					hit++
				case covered[p]:
					hit++
				case isUnreachable:
					excused++
				case isUntested:
					todo++
				default:
					missing = append(missing, p.String())
				}
			}
			reachable := len(declared) - excused
			t.Logf("%s: covered %d/%d declared pairs (%.1f%%), %d/%d reachable (%.1f%%); %d listed unreachable, %d still untested",
				api, hit, len(declared), percent(hit, len(declared)), hit, reachable, percent(hit, reachable), excused, todo)
			if len(missing) > 0 {
				t.Errorf("%d declared pairs no test produced (write the test %s, or list the pair in %s with the reason):\n  %s",
					len(missing), where(api), unreachableFile, strings.Join(missing, "\n  "))
			}
			if len(done) > 0 {
				t.Errorf("listed in %s, yet a test produced them now: remove them from the list:\n  %s", untestedFile, strings.Join(done, "\n  "))
			}
			if len(stale) > 0 {
				t.Errorf("listed unreachable in %s, yet a test produced them:\n  %s", unreachableFile, strings.Join(stale, "\n  "))
			}
			checkFields(t, api, coveredFields, unreachableFields, untestedFields, unreachable, untested)
		})
	}
}

// checkFields is the field coverage of api: every property and header its
// responses declare was present in some response a test held to the spec,
// unless its pair cannot be produced (or has no test yet), or the field is
// listed unreachable with its reason (or, while its test is written,
// untested). An entry of either list that names a field a test produced
// fails, so the lists never go stale.
func checkFields(t *testing.T, api string, covered map[Field]bool, unreachable, untested *FieldList,
	unreachablePairs, untestedPairs map[Pair]Unreachable) {
	declared, err := DeclaredFields(api)
	require.NoError(t, err)
	var hit, excused, pairExcused, todo int
	var missing []string
	for _, f := range declared {
		_, isUnreachable := unreachable.Excuse(f)
		_, isUntested := untested.Excuse(f)
		_, pairUnreachable := unreachablePairs[f.Pair()]
		_, pairUntested := untestedPairs[f.Pair()]
		switch {
		case covered[f]:
			hit++
		case pairUnreachable:
			pairExcused++
		case isUnreachable:
			excused++
		case pairUntested, isUntested:
			todo++
		default:
			missing = append(missing, f.String())
		}
	}
	producible := len(declared) - excused - pairExcused
	t.Logf("%s: fields covered %d/%d declared (%.1f%%), %d/%d producible (%.1f%%), %d/%d producible less the untested (%.1f%%); %d listed unreachable, %d of unreachable pairs, %d still untested (theirs or their pair's test to write)",
		api, hit, len(declared), percent(hit, len(declared)), hit, producible, percent(hit, producible),
		hit, producible-todo, percent(hit, producible-todo), excused, pairExcused, todo)
	if len(missing) > 0 {
		t.Errorf("%d declared fields no test's response carried (a body property by its JSON pointer, * for every element, or header:Name): "+
			"write a test %s whose response has it (on both backends), or list it in %s with pointer: and the reason (docs/maintaining-specs.md says how):\n  %s",
			len(missing), where(api), unreachableFile, strings.Join(missing, "\n  "))
	}
	for _, l := range []*FieldList{unreachable, untested} {
		entries, matched := l.Entries()
		for i, u := range entries {
			if u.API != api {
				continue
			}
			for _, f := range matched[i] {
				if covered[f] {
					t.Errorf("%s lists %s %s %d %s, yet a test's response carried %s: take it out of the list (or narrow it)",
						l.path, u.API, u.OperationID, u.Status, u.Pointer, f)
					break
				}
			}
		}
	}
}

// where says where the tests of api live: the packages `make cover` ran
// (APISTACK_COVER_SCOPE), else the API's server package.
func where(api string) string {
	if scope := os.Getenv("APISTACK_COVER_SCOPE"); scope != "" {
		return "in " + scope
	}
	if api == "faxwebhooks" {
		api = "fax"
	}
	return "in servers/" + api + "/ (or any package `make test` runs)"
}

func percent(n, of int) float64 {
	if of == 0 {
		return 100
	}
	return 100 * float64(n) / float64(of)
}
