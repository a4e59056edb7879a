package testenv

import (
	"context"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"

	pb "cloud.google.com/go/datastore/apiv1/datastorepb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"socialstream/internal/dsemu"
)

// Index coverage.
//
// The Firestore emulator, which the tests run on because it behaves like
// production, does not enforce index.yaml; the legacy Datastore emulator
// does (--require_indexes) but judges nothing else well. So the tests
// reach the Firestore emulator through a recorder, a gRPC proxy that
// passes every call through unchanged and keeps the first query of each
// distinct shape (kind, filters, orders, projection); when the tests
// have run, Main replays each shape on a legacy emulator started with
// index.yaml and fails the run, naming the query, if it lacks an index.

// recorder is a transparent gRPC proxy in front of an emulator that
// records the queries it passes.
type recorder struct {
	addr    string
	backend *grpc.ClientConn
	srv     *grpc.Server

	mu     sync.Mutex
	shapes map[string]*pb.RunQueryRequest
}

const runQuery = "/google.datastore.v1.Datastore/RunQuery"

// startRecorder starts a recorder in front of the emulator at host.
func startRecorder(host string) (*recorder, error) {
	backend, err := grpc.NewClient("passthrough:///"+host, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		backend.Close()
		return nil, err
	}
	r := &recorder{addr: l.Addr().String(), backend: backend, shapes: map[string]*pb.RunQueryRequest{}}
	r.srv = grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.UnknownServiceHandler(r.forward))
	go r.srv.Serve(l)
	return r, nil
}

// forward passes one unary call (every Datastore method is unary) to the
// backend with its metadata, recording it first if it is a query.
func (r *recorder) forward(_ any, stream grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(stream)
	var req frame
	if err := stream.RecvMsg(&req); err != nil {
		return err
	}
	if method == runQuery {
		var q pb.RunQueryRequest
		if err := proto.Unmarshal(req, &q); err == nil {
			r.record(&q)
		}
	}
	ctx := stream.Context()
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		ctx = metadata.NewOutgoingContext(ctx, md)
	}
	var resp frame
	if err := r.backend.Invoke(ctx, method, &req, &resp, grpc.ForceCodec(rawCodec{})); err != nil {
		return err
	}
	return stream.SendMsg(&resp)
}

func (r *recorder) record(q *pb.RunQueryRequest) {
	if q.GetQuery() == nil { // a GQL query: none here
		return
	}
	shape := queryShape(q.GetQuery())
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.shapes[shape]; !ok {
		r.shapes[shape] = q
	}
}

// queryShape names what decides a query's index: its kind, the property
// and operator of each filter, its orders, projection and distinct-on,
// without the values.
func queryShape(q *pb.Query) string {
	var b strings.Builder
	for _, k := range q.GetKind() {
		b.WriteString(k.GetName())
	}
	var filters func(f *pb.Filter)
	filters = func(f *pb.Filter) {
		switch {
		case f.GetCompositeFilter() != nil:
			fmt.Fprintf(&b, " %s(", f.GetCompositeFilter().GetOp())
			for _, sub := range f.GetCompositeFilter().GetFilters() {
				filters(sub)
			}
			b.WriteString(")")
		case f.GetPropertyFilter() != nil:
			pf := f.GetPropertyFilter()
			fmt.Fprintf(&b, " %s %s", pf.GetProperty().GetName(), pf.GetOp())
		}
	}
	if q.GetFilter() != nil {
		filters(q.GetFilter())
	}
	for _, o := range q.GetOrder() {
		fmt.Fprintf(&b, " order %s %s", o.GetProperty().GetName(), o.GetDirection())
	}
	for _, p := range q.GetProjection() {
		fmt.Fprintf(&b, " project %s", p.GetProperty().GetName())
	}
	for _, d := range q.GetDistinctOn() {
		fmt.Fprintf(&b, " distinct %s", d.GetName())
	}
	return b.String()
}

// Shapes returns the recorded query shapes, sorted.
func (r *recorder) Shapes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.shapes))
	for s := range r.shapes {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func (r *recorder) Stop() {
	r.srv.Stop()
	r.backend.Close()
}

// checkIndexes replays each recorded query shape on a legacy emulator
// that enforces index (the one at host, or one it starts when host is
// ""), and returns one line per shape it refused.
func (r *recorder) checkIndexes(ctx context.Context, index, host string, log io.Writer) ([]string, error) {
	r.mu.Lock()
	reqs := make(map[string]*pb.RunQueryRequest, len(r.shapes))
	for s, q := range r.shapes {
		reqs[s] = q
	}
	r.mu.Unlock()
	if len(reqs) == 0 {
		return nil, nil
	}
	if host == "" {
		emu, err := dsemu.Start(ctx, dsemu.Options{Engine: dsemu.Legacy, IndexFile: index, InMemory: true, Log: log})
		if err != nil {
			return nil, fmt.Errorf("start the legacy emulator for the index check: %w", err)
		}
		defer emu.Stop()
		host = emu.Host
	}
	conn, err := grpc.NewClient("passthrough:///"+host, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	client := pb.NewDatastoreClient(conn)
	var missing []string
	for _, shape := range r.Shapes() {
		q := proto.Clone(reqs[shape]).(*pb.RunQueryRequest)
		q.ReadOptions = nil // no transaction of the other emulator's
		oneValue(q.GetQuery().GetFilter())
		qq := q.GetQuery()
		qq.StartCursor, qq.EndCursor, qq.Offset, qq.Limit = nil, nil, 0, nil
		_, err := client.RunQuery(ctx, q)
		switch {
		case err == nil:
		case status.Code(err) == codes.FailedPrecondition:
			missing = append(missing, fmt.Sprintf("%s: %v", shape, status.Convert(err).Message()))
		default:
			return missing, fmt.Errorf("replay %q on the legacy emulator: %w", shape, err)
		}
	}
	return missing, nil
}

// oneValue cuts the values of every IN and NOT_IN filter under f to
// their first: the legacy emulator takes no more than one, and what
// index a query needs does not depend on how many values it names.
func oneValue(f *pb.Filter) {
	if c := f.GetCompositeFilter(); c != nil {
		for _, sub := range c.GetFilters() {
			oneValue(sub)
		}
		return
	}
	pf := f.GetPropertyFilter()
	switch pf.GetOp() {
	case pb.PropertyFilter_IN, pb.PropertyFilter_NOT_IN:
		if vs := pf.GetValue().GetArrayValue().GetValues(); len(vs) > 1 {
			pf.Value = &pb.Value{ValueType: &pb.Value_ArrayValue{ArrayValue: &pb.ArrayValue{Values: vs[:1]}}}
		}
	}
}

// frame is one gRPC message, passed through unread.
type frame []byte

// rawCodec moves frames as they are; it is named "proto" so that the
// content type on the wire stays what both ends expect.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, fmt.Errorf("testenv: cannot marshal %T", v)
	}
	return *f, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return fmt.Errorf("testenv: cannot unmarshal into %T", v)
	}
	*f = append((*f)[:0], data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }
