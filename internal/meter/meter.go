// Package meter counts what Firestore in Datastore mode bills for the
// calls a Datastore client makes: entities looked up (found and missing
// apart), queries and their results (entities, keys-only), entities
// written and deleted, property transforms, and the index entries and
// bytes the written entities store. It is a gRPC client interceptor
// around the real client and the real emulator, reading each request and
// its answer; it changes nothing that passes.
//
// The rules it counts by, after the published ones (Firestore pricing,
// Datastore mode storage size calculations):
//
//   - A lookup bills one read per key, found or missing.
//   - A query bills one read per entity it returns, and one for itself
//     when it returns none; results skipped by an offset bill as reads too.
//     A keys-only or projection query bills one read for itself; its
//     results are counted apart (KeyResults), as index entries read.
//   - Every insert, update and upsert is one entity written; a mutation
//     of transforms alone (an increment, a check) is one too. A delete is
//     one entity deleted.
//   - Index entries of a written entity: two per indexed value (the
//     ascending and descending built-in indexes; each value of a list
//     counts), plus, for each composite index of its kind in index.yaml
//     whose properties it all has indexed, the product of their numbers of
//     values (times the number of its ancestors, itself included, for an
//     ancestor index). A transform that appends values adds the entries of
//     those values.
//   - Bytes: an entity's stored size (its key, each property's name and
//     value, 32 bytes of overhead) plus each index entry's (the entity's
//     key, the indexed values, 32 bytes).
package meter

import (
	"context"
	"fmt"
	"strings"
	"sync"

	pb "cloud.google.com/go/datastore/apiv1/datastorepb"
	"go.yaml.in/yaml/v3"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
)

// Bill is what a run of calls comes to.
type Bill struct {
	// Calls are the Datastore RPCs made, by method.
	Calls map[string]int `json:"calls"`
	// Found and Missing are the keys lookups asked for, found or not.
	Found   int `json:"found"`
	Missing int `json:"missing"`
	// Queries counts RunQuery and RunAggregationQuery calls (a query the
	// client pages through is one call a page).
	Queries int `json:"queries"`
	// EntityResults are the entities queries returned; KeyResults the
	// keys-only and projection results; Skipped those an offset skipped.
	EntityResults int `json:"entityResults"`
	KeyResults    int `json:"keyResults"`
	Skipped       int `json:"skipped"`
	// Empty counts the queries that returned no entity (each bills one
	// read for itself).
	Empty int `json:"emptyQueries"`
	// Writes and Deletes are entities written and deleted; Transforms the
	// property transforms the writes carried.
	Writes     int `json:"writes"`
	Deletes    int `json:"deletes"`
	Transforms int `json:"transforms"`
	// IndexEntries and Bytes are what the written entities store, as
	// written, and what appending transforms added.
	IndexEntries int   `json:"indexEntries"`
	Bytes        int64 `json:"bytes"`
}

// Reads returns the entity reads the bill is charged: every key looked
// up, every entity a query returned or skipped, and one for each query
// that returned no entity (keys-only queries among them).
func (b Bill) Reads() int { return b.Found + b.Missing + b.EntityResults + b.Skipped + b.Empty }

// Add returns the sum of two bills.
func (b Bill) Add(o Bill) Bill {
	calls := map[string]int{}
	for _, m := range []map[string]int{b.Calls, o.Calls} {
		for k, v := range m {
			calls[k] += v
		}
	}
	return Bill{Calls: calls, Found: b.Found + o.Found, Missing: b.Missing + o.Missing, Queries: b.Queries + o.Queries,
		EntityResults: b.EntityResults + o.EntityResults, KeyResults: b.KeyResults + o.KeyResults, Skipped: b.Skipped + o.Skipped,
		Empty: b.Empty + o.Empty, Writes: b.Writes + o.Writes, Deletes: b.Deletes + o.Deletes, Transforms: b.Transforms + o.Transforms,
		IndexEntries: b.IndexEntries + o.IndexEntries, Bytes: b.Bytes + o.Bytes}
}

// String sums the bill up on one line.
func (b Bill) String() string {
	return fmt.Sprintf("%d reads (%d found, %d missing, %d query entities, %d keys-only results, %d queries), %d writes, %d deletes, %d transforms, %d index entries, %d bytes",
		b.Reads(), b.Found, b.Missing, b.EntityResults, b.KeyResults, b.Queries, b.Writes, b.Deletes, b.Transforms, b.IndexEntries, b.Bytes)
}

// Meter counts the bill of the calls that pass its interceptor.
type Meter struct {
	indexes map[string][]index // composite indexes by kind
	mu      sync.Mutex
	bill    Bill
}

type index struct {
	ancestor   bool
	properties []string
}

// New returns a Meter that counts composite index entries by indexYAML,
// the contents of an index.yaml.
func New(indexYAML []byte) (*Meter, error) {
	var doc struct {
		Indexes []struct {
			Kind       string `yaml:"kind"`
			Ancestor   any    `yaml:"ancestor"`
			Properties []struct {
				Name string `yaml:"name"`
			} `yaml:"properties"`
		} `yaml:"indexes"`
	}
	if err := yaml.Unmarshal(indexYAML, &doc); err != nil {
		return nil, fmt.Errorf("meter: index.yaml: %w", err)
	}
	m := &Meter{indexes: map[string][]index{}, bill: Bill{Calls: map[string]int{}}}
	for _, ix := range doc.Indexes {
		if ix.Kind == "" || len(ix.Properties) == 0 {
			return nil, fmt.Errorf("meter: index.yaml: an index of kind %q has no properties", ix.Kind)
		}
		x := index{ancestor: fmt.Sprint(ix.Ancestor) == "true" || fmt.Sprint(ix.Ancestor) == "yes"}
		for _, p := range ix.Properties {
			x.properties = append(x.properties, p.Name)
		}
		m.indexes[ix.Kind] = append(m.indexes[ix.Kind], x)
	}
	return m, nil
}

// Option returns the client option that installs the meter's interceptor.
func (m *Meter) Option() option.ClientOption {
	return option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(m.Intercept))
}

// Take returns the bill since the last Take and starts a new one.
func (m *Meter) Take() Bill {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.bill
	m.bill = Bill{Calls: map[string]int{}}
	return b
}

// Intercept is the gRPC unary client interceptor that counts.
func (m *Meter) Intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	if err != nil {
		return err // a failed call bills nothing it could be told apart by
	}
	var b Bill
	switch r := reply.(type) {
	case *pb.LookupResponse:
		b.Found, b.Missing = len(r.GetFound()), len(r.GetMissing())
	case *pb.RunQueryResponse:
		b.Queries = 1
		batch := r.GetBatch()
		n := len(batch.GetEntityResults())
		if batch.GetEntityResultType() == pb.EntityResult_FULL {
			b.EntityResults, b.Skipped = n, int(batch.GetSkippedResults())
		} else {
			b.KeyResults = n
			n = 0
		}
		if n == 0 {
			b.Empty = 1
		}
	case *pb.RunAggregationQueryResponse:
		// A count bills one read per 1,000 index entries it matched, at
		// least one.
		b.Queries, b.Empty = 1, 1
		for _, res := range r.GetBatch().GetAggregationResults() {
			for _, v := range res.GetAggregateProperties() {
				b.Empty = max(b.Empty, int((v.GetIntegerValue()+999)/1000))
			}
		}
	}
	if c, ok := req.(*pb.CommitRequest); ok {
		for _, mu := range c.GetMutations() {
			m.mutation(&b, mu)
		}
	}
	b.Calls = map[string]int{method[strings.LastIndex(method, "/")+1:]: 1}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bill = m.bill.Add(b)
	return nil
}

func (m *Meter) mutation(b *Bill, mu *pb.Mutation) {
	if k := mu.GetDelete(); k != nil {
		b.Deletes++
		return
	}
	b.Writes++
	b.Transforms += len(mu.GetPropertyTransforms())
	e := mu.GetInsert()
	if e == nil {
		e = mu.GetUpsert()
	}
	if e == nil {
		e = mu.GetUpdate()
	}
	if e == nil {
		return
	}
	if mu.GetPropertyMask() == nil || len(e.GetProperties()) > 0 { // not a transform's empty base
		entries, bytes := m.Stored(e)
		b.IndexEntries += entries
		b.Bytes += bytes
	}
	kind := lastKind(e.GetKey())
	keySize := KeySize(e.GetKey())
	for _, t := range mu.GetPropertyTransforms() {
		added := t.GetAppendMissingElements().GetValues()
		if len(added) == 0 {
			continue
		}
		per := 2 // the built-in indexes; composite ones that name it count once a value
		for _, ix := range m.indexes[kind] {
			for _, p := range ix.properties {
				if p == t.GetProperty() {
					per++
				}
			}
		}
		b.IndexEntries += per * len(added)
		for _, v := range added {
			b.Bytes += int64(per) * (keySize + stringSize(t.GetProperty()) + valueSize(v) + 32)
		}
	}
}

// Stored returns how many index entries an entity stores, and its stored
// size in bytes with theirs.
func (m *Meter) Stored(e *pb.Entity) (entries int, bytes int64) {
	keySize := KeySize(e.GetKey())
	bytes = keySize + 32
	indexed := map[string][]*pb.Value{}
	for name, v := range e.GetProperties() {
		bytes += stringSize(name) + valueSize(v)
		for _, x := range indexedValues(v) {
			indexed[name] = append(indexed[name], x)
			entries += 2
			bytes += 2 * (keySize + stringSize(name) + valueSize(x) + 32)
		}
	}
	for _, ix := range m.indexes[lastKind(e.GetKey())] {
		n := 1
		size := keySize + 32
		for _, p := range ix.properties {
			n *= len(indexed[p])
			if len(indexed[p]) > 0 {
				size += valueSize(indexed[p][0])
			}
		}
		if ix.ancestor {
			n *= len(e.GetKey().GetPath())
		}
		entries += n
		bytes += int64(n) * size
	}
	return entries, bytes
}

// indexedValues returns the values of a property that its indexes hold:
// each element of a list, none excluded from indexes, no entity values.
func indexedValues(v *pb.Value) []*pb.Value {
	if a := v.GetArrayValue(); a != nil {
		var out []*pb.Value
		for _, x := range a.GetValues() {
			out = append(out, indexedValues(x)...)
		}
		return out
	}
	if v.GetExcludeFromIndexes() || v.GetEntityValue() != nil {
		return nil
	}
	return []*pb.Value{v}
}

func lastKind(k *pb.Key) string {
	path := k.GetPath()
	if len(path) == 0 {
		return ""
	}
	return path[len(path)-1].GetKind()
}

// KeySize is a key's stored size: each path element's kind and name (or
// 8 bytes of id), and 16 bytes.
func KeySize(k *pb.Key) int64 {
	n := int64(16)
	for _, e := range k.GetPath() {
		n += stringSize(e.GetKind())
		if e.GetName() != "" {
			n += stringSize(e.GetName())
		} else {
			n += 8
		}
	}
	return n
}

func stringSize(s string) int64 { return int64(len(s)) + 1 }

// valueSize is a value's stored size.
func valueSize(v *pb.Value) int64 {
	switch x := v.GetValueType().(type) {
	case *pb.Value_StringValue:
		return stringSize(x.StringValue)
	case *pb.Value_BlobValue:
		return int64(len(x.BlobValue))
	case *pb.Value_BooleanValue, *pb.Value_NullValue:
		return 1
	case *pb.Value_KeyValue:
		return KeySize(x.KeyValue)
	case *pb.Value_GeoPointValue:
		return 16
	case *pb.Value_EntityValue:
		var n int64
		for name, p := range x.EntityValue.GetProperties() {
			n += stringSize(name) + valueSize(p)
		}
		return n
	case *pb.Value_ArrayValue:
		var n int64
		for _, e := range x.ArrayValue.GetValues() {
			n += valueSize(e)
		}
		return n
	}
	return 8 // integers, doubles, timestamps
}
