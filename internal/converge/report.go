package converge

import (
	"fmt"
	"io"
	"sort"
	"time"

	"socialstream/internal/store"
)

// Report is what a run found.
type Report struct {
	Seed            uint64
	Clients         int
	Elapsed         time.Duration // of the mix
	Ops, Failed     map[string]int
	TaskFaults      map[string]int64
	DatastoreFaults map[string]int64
	// Converged is the time from the last operation's answer until every
	// queue was empty.
	Converged time.Duration
	// Longest is the longest a change of a request the stacks served
	// (jobs' included) took to commit after it enqueued its jobs: under
	// Config.GiveUpAfter, or a violation.
	Longest                   time.Duration
	LongestPath               string
	Users, Activities, Groups int
	// CelebrityPosts are the live activities of celebrities, merged into
	// homes as they are read (Config.CelebrityFollowers).
	CelebrityPosts int
	Checked        int // feeds and counts compared
	Remote         RemoteReport
	// Shared is what the cache tier both instances share was asked and
	// answered (none without Config.SharedCache).
	Shared store.SharedStats
	// HomesTaken, HomesRead and HomesKept are how many home pages'
	// ranges the instances took as kept, how many they read, and how
	// many of those they kept, during the mix and the comparison (which
	// reads each home it reads through the second instance twice, and
	// compares the second: what it kept).
	HomesTaken, HomesRead, HomesKept int64
	Violations                       []string
}

// Print writes the report for people.
func (r *Report) Print(w io.Writer) {
	total, failed := r.operations()
	fmt.Fprintf(w, "seed %d, %d clients, mix ran %s\n", r.Seed, r.Clients, r.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(w, "operations: %d (%d answered with an error and resolved by reading)\n", total, failed)
	for _, k := range sortedKeys(r.Ops) {
		fmt.Fprintf(w, "  %-16s %6d  (%d failed)\n", k, r.Ops[k], r.Failed[k])
	}
	fmt.Fprintf(w, "faults injected by the tasks emulator: %d\n", sum(r.TaskFaults))
	for _, k := range sortedKeys(r.TaskFaults) {
		fmt.Fprintf(w, "  %-44s %6d\n", k, r.TaskFaults[k])
	}
	fmt.Fprintf(w, "faults injected into Datastore calls: %d\n", sum(r.DatastoreFaults))
	for _, k := range sortedKeys(r.DatastoreFaults) {
		fmt.Fprintf(w, "  %-44s %6d\n", k, r.DatastoreFaults[k])
	}
	rm := r.Remote
	fmt.Fprintf(w, "the other server: %d Notes sent (%d kept here, %d of them a celebrity's; %d deleted, %d overtaken by their Delete), %d in homes here; %d deliveries sent twice, %d tried again; %d deliveries from here refused while it was unreachable; %d posts from here it had to take taken, %d it had not to withheld\n",
		rm.Notes, rm.Taken, rm.Celebrity, rm.Deleted, rm.Overtaken, rm.InHomes, rm.Twice, rm.Retried, rm.Refused, rm.Reached, rm.Withheld)
	if sh := r.Shared; sh != (store.SharedStats{}) {
		fmt.Fprintf(w, "the shared page cache: %d entities taken, %d looked for and not taken, %d tombstones, %d calls unanswered\n", sh.Hits, sh.Misses, sh.Tombs, sh.Failed)
	}
	if r.HomesTaken+r.HomesRead > 0 {
		fmt.Fprintf(w, "the instances' home ranges: %d taken as kept, %d read (%d of them kept)\n", r.HomesTaken, r.HomesRead, r.HomesKept)
	}
	fmt.Fprintf(w, "final state: %d users, %d activities (%d of celebrities), %d groups; %d feeds and counts compared\n", r.Users, r.Activities, r.CelebrityPosts, r.Groups, r.Checked)
	fmt.Fprintf(w, "converged %s after the last operation; the longest commit came %s after its jobs (%s)\n", r.Converged.Round(time.Millisecond), r.Longest.Round(time.Millisecond), r.LongestPath)
	fmt.Fprintf(w, "violations: %d\n", len(r.Violations))
	for _, v := range r.Violations {
		fmt.Fprintf(w, "  - %s\n", v)
	}
}

// operations returns how many operations the mix ran, and how many of
// them were answered with an error (and resolved by reading).
func (r *Report) operations() (total, failed int) {
	for _, n := range r.Ops {
		total += n
	}
	for _, n := range r.Failed {
		failed += n
	}
	return total, failed
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// PrintSweep writes a table of runs, one row a seed, in Markdown.
func PrintSweep(w io.Writer, reps []*Report) {
	fmt.Fprintln(w, "| seed | operations (failed) | task faults | Datastore faults | mix | converged | longest commit after its jobs | violations |")
	fmt.Fprintln(w, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range reps {
		total, failed := r.operations()
		fmt.Fprintf(w, "| %d | %d (%d) | %d | %d | %s | %s | %s | %d |\n", r.Seed, total, failed, sum(r.TaskFaults), sum(r.DatastoreFaults),
			r.Elapsed.Round(time.Second), r.Converged.Round(time.Second), r.Longest.Round(100*time.Millisecond), len(r.Violations))
	}
}
