// Package query queries Thing by each of its properties but one.
package query

// Q stands for a Datastore query.
type Q struct{}

func (Q) FilterField(string, string, any) Q { return Q{} }
func (Q) Order(string) Q                    { return Q{} }
func (Q) Project(...string) Q               { return Q{} }

func newest(q Q) Q { return q.Order("-n") }

func tagged(q Q, tag string) {
	for _, f := range []string{"tags"} {
		q.FilterField(f, "=", tag)
	}
}

func where(q Q, field string, v any) Q { return q.FilterField(field, "=", v) }

func kept(q Q) Q { return where(q, "kept", true) }

func whereAll(q Q, fields []string, v any) Q {
	for _, f := range fields {
		q = where(q, f, v)
	}
	return q
}

func deep(q Q) Q { return whereAll(q, []string{"deep"}, true) }

func shown(q Q) Q { return q.Project("n", "shown") }
