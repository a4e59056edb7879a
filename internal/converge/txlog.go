package converge

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"strings"
	"sync"
	"time"

	pb "cloud.google.com/go/datastore/apiv1/datastorepb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// txLog writes a line for each Datastore call of a transaction, and for
// every commit, as it was sent (under the faults: a call failed before
// it was sent is not there): when it began, the call, the transaction
// (a hash of its id), the request or job that made it, how long
// it took and its code, and the keys it read or wrote. Lock waits show
// as calls of about two seconds answered Aborted, and the lines of one
// key tell who held it meanwhile (docs/convergence.md).
type txLog struct {
	mu sync.Mutex
	w  io.Writer
}

func (t *txLog) option() option.ClientOption {
	return option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(t.intercept))
}

func (t *txLog) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	start := time.Now()
	err := invoker(ctx, method, req, reply, cc, opts...)
	call := method[strings.LastIndex(method, "/")+1:]
	tx, keys := txCall(req, reply, err)
	if len(tx) == 0 && call != "Commit" {
		return err
	}
	by := "-"
	if tr, ok := ctx.Value(trackedKey{}).(*tracked); ok {
		by = strings.ReplaceAll(tr.path, " ", "_")
	}
	id := ""
	if len(tx) > 0 {
		h := fnv.New32a()
		h.Write(tx)
		id = fmt.Sprintf("%08x", h.Sum32())
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.w, "%s %s tx=%s %s %dms %s [%s]\n", start.Format("15:04:05.000"), call, id, by,
		time.Since(start).Milliseconds(), status.Code(err), strings.Join(keys, " "))
	return err
}

// txCall returns the transaction of a call (for BeginTransaction, the
// one it began), and the keys it names: a lookup's, a query's kind and
// filter, a commit's mutations (mutationText).
func txCall(req, reply any, err error) ([]byte, []string) {
	var keys []string
	switch r := req.(type) {
	case *pb.LookupRequest:
		for _, k := range r.GetKeys() {
			keys = append(keys, keyText(k))
		}
		return r.GetReadOptions().GetTransaction(), keys
	case *pb.RunQueryRequest:
		for _, k := range r.GetQuery().GetKind() {
			keys = append(keys, "query:"+k.GetName())
		}
		if f := r.GetQuery().GetFilter(); f != nil {
			keys = append(keys, strings.Join(strings.Fields(f.String()), " "))
		}
		return r.GetReadOptions().GetTransaction(), keys
	case *pb.CommitRequest:
		for _, m := range r.GetMutations() {
			keys = append(keys, mutationText(m))
		}
		return r.GetTransaction(), keys
	case *pb.RollbackRequest:
		return r.GetTransaction(), nil
	case *pb.BeginTransactionRequest:
		if b, ok := reply.(*pb.BeginTransactionResponse); ok && err == nil {
			return b.GetTransaction(), nil
		}
	}
	return nil, nil
}

// mutationText is a mutation's key, marked U(psert), I(nsert), W
// (update) or D(elete).
func mutationText(m *pb.Mutation) string {
	switch {
	case m.GetUpsert() != nil:
		return "U " + keyText(m.GetUpsert().GetKey())
	case m.GetInsert() != nil:
		return "I " + keyText(m.GetInsert().GetKey())
	case m.GetUpdate() != nil:
		return "W " + keyText(m.GetUpdate().GetKey())
	}
	return "D " + keyText(m.GetDelete())
}

// keyText is a key's path, Kind:name-or-id/Kind:name-or-id.
func keyText(k *pb.Key) string {
	parts := make([]string, 0, len(k.GetPath()))
	for _, e := range k.GetPath() {
		if e.GetName() != "" {
			parts = append(parts, e.GetKind()+":"+e.GetName())
		} else {
			parts = append(parts, fmt.Sprintf("%s:%d", e.GetKind(), e.GetId()))
		}
	}
	return strings.Join(parts, "/")
}
