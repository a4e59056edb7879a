package pair

import "testing"

// The history's rules, as the jobs of a pair meet them in any order: an
// end that asks for a removal puts one under way; a link made meanwhile
// sets the cutoff once (the removal spares what it sees); a later end
// asks again, clearing the cutoff; only the newest removal's finish ends
// what is under way, and a finish is recorded once.
func TestEndedHistory(t *testing.T) {
	type step struct {
		op          string // "end", "begin", "finish"
		gen, remove int64
		changed     bool // what Begin or Finish report
	}
	for _, c := range []struct {
		name    string
		steps   []step
		want    Ended
		pending bool
	}{
		{"an end that keeps the copies", []step{{op: "end", gen: 10}}, Ended{Gen: 10}, false},
		{"an end that removes them", []step{{op: "end", gen: 10, remove: 20}}, Ended{Gen: 10, Removal: 20}, true},
		{"a link during the removal", []step{{op: "end", gen: 10, remove: 20}, {op: "begin", gen: 30, changed: true}},
			Ended{Gen: 10, Removal: 20, Cutoff: 30}, true},
		{"the cutoff is the first link's", []step{{op: "end", gen: 10, remove: 20}, {op: "begin", gen: 30, changed: true}, {op: "begin", gen: 40}},
			Ended{Gen: 10, Removal: 20, Cutoff: 30}, true},
		{"no removal, no cutoff", []step{{op: "begin", gen: 30}}, Ended{}, false},
		{"the removal finishes", []step{{op: "end", gen: 10, remove: 20}, {op: "finish", remove: 20, changed: true}},
			Ended{Gen: 10, Removal: 20, Done: 20}, false},
		{"a finish twice", []step{{op: "end", gen: 10, remove: 20}, {op: "finish", remove: 20, changed: true}, {op: "finish", remove: 20}},
			Ended{Gen: 10, Removal: 20, Done: 20}, false},
		{"an older removal's finish ends nothing", []step{{op: "end", gen: 10, remove: 20}, {op: "end", gen: 30, remove: 40}, {op: "finish", remove: 20}},
			Ended{Gen: 30, Removal: 40}, true},
		{"a second end clears the cutoff", []step{{op: "end", gen: 10, remove: 20}, {op: "begin", gen: 30, changed: true}, {op: "end", gen: 30, remove: 50}},
			Ended{Gen: 30, Removal: 50}, true},
		{"a late end of an older removal keeps the newer", []step{{op: "end", gen: 30, remove: 50}, {op: "end", gen: 10, remove: 20}},
			Ended{Gen: 10, Removal: 50}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var e Ended
			for i, s := range c.steps {
				switch s.op {
				case "end":
					e.End(s.gen, s.remove)
				case "begin":
					if got := e.Begin(s.gen); got != s.changed {
						t.Errorf("step %d: Begin reported %v", i, got)
					}
				case "finish":
					if got := e.Finish(s.remove); got != s.changed {
						t.Errorf("step %d: Finish reported %v", i, got)
					}
				}
			}
			e.Pair = nil
			if e.Gen != c.want.Gen || e.Removal != c.want.Removal || e.Cutoff != c.want.Cutoff || e.Done != c.want.Done || e.Pending() != c.pending {
				t.Errorf("history %+v (pending %v), want %+v (pending %v)", e, e.Pending(), c.want, c.pending)
			}
		})
	}
}
