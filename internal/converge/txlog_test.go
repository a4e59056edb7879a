package converge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"

	pb "cloud.google.com/go/datastore/apiv1/datastorepb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The transaction log names each call of a transaction with the
// transaction, the request that made it, its code and its keys; calls
// outside a transaction are left out, but for commits.
func TestTxLogLines(t *testing.T) {
	var out bytes.Buffer
	l := &txLog{w: &out}
	tx := []byte{0xde, 0xad, 0xbe, 0xef}
	key := func(kind, name string, id int64) *pb.Key {
		e := &pb.Key_PathElement{Kind: kind}
		if name != "" {
			e.IdType = &pb.Key_PathElement_Name{Name: name}
		} else {
			e.IdType = &pb.Key_PathElement_Id{Id: id}
		}
		return &pb.Key{Path: []*pb.Key_PathElement{e}}
	}
	inTx := &pb.ReadOptions{ConsistencyType: &pb.ReadOptions_Transaction{Transaction: tx}}
	ctx := context.WithValue(context.Background(), trackedKey{}, &tracked{path: "POST /inbox"})
	calls := []struct {
		method     string
		req, reply any
		err        error
	}{
		{"/google.datastore.v1.Datastore/BeginTransaction", &pb.BeginTransactionRequest{}, &pb.BeginTransactionResponse{Transaction: tx}, nil},
		{"/google.datastore.v1.Datastore/Lookup", &pb.LookupRequest{ReadOptions: inTx, Keys: []*pb.Key{key("Activity", "a1", 0), key("User", "", 7)}}, &pb.LookupResponse{}, nil},
		{"/google.datastore.v1.Datastore/Lookup", &pb.LookupRequest{Keys: []*pb.Key{key("Outside", "x", 0)}}, &pb.LookupResponse{}, nil},
		{"/google.datastore.v1.Datastore/Commit", &pb.CommitRequest{TransactionSelector: &pb.CommitRequest_Transaction{Transaction: tx}, Mutations: []*pb.Mutation{
			{Operation: &pb.Mutation_Upsert{Upsert: &pb.Entity{Key: key("Counts", "u1", 0)}}},
			{Operation: &pb.Mutation_Delete{Delete: key("Activity", "a1", 0)}},
		}}, &pb.CommitResponse{}, status.Error(codes.Aborted, "too much contention")},
		{"/google.datastore.v1.Datastore/Commit", &pb.CommitRequest{Mutations: []*pb.Mutation{
			{Operation: &pb.Mutation_Insert{Insert: &pb.Entity{Key: key("Like", "l1", 0)}}},
		}}, &pb.CommitResponse{}, nil},
	}
	for _, c := range calls {
		invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return c.err }
		if err := l.intercept(ctx, c.method, c.req, c.reply, nil, invoker); !errors.Is(err, c.err) {
			t.Fatalf("%s: the call's error %v came back as %v", c.method, c.err, err)
		}
	}
	h := fnv.New32a()
	h.Write(tx)
	id := fmt.Sprintf("tx=%08x", h.Sum32())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		"BeginTransaction " + id + " POST_/inbox",
		"Lookup " + id + " POST_/inbox",
		"Commit " + id + " POST_/inbox",
		"Commit tx= POST_/inbox",
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d (the lookup outside a transaction left out):\n%s", len(lines), len(want), out.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], " "+w+" ") {
			t.Errorf("line %d = %q, want it to hold %q", i, lines[i], w)
		}
	}
	for i, w := range map[int]string{1: "OK [Activity:a1 User:7]", 2: "Aborted [U Counts:u1 D Activity:a1]", 3: "OK [I Like:l1]"} {
		if !strings.HasSuffix(lines[i], w) {
			t.Errorf("line %d = %q, want it to end %q", i, lines[i], w)
		}
	}
}
