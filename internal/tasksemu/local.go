package tasksemu

import (
	"context"
	"fmt"
	"net"
	"os"

	tasksqueue "socialstream/internal/queue"
)

// Local is an emulator serving on loopback and a Queue that enqueues to it
// through the real cloudtasks/apiv2 client: what the local stack and the
// tests enqueue to.
type Local struct {
	Server *Server
	Queue  *tasksqueue.CloudTasks
	Host   string
	close  func()
}

// StartLocal serves an emulator with cfg on addr and dials it.
func StartLocal(cfg Config, addr string) (*Local, error) {
	srv, err := New(cfg)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("tasks emulator address: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ctx, l)
	}()
	stop := func() { cancel(); <-done }
	client, err := tasksqueue.Dial(ctx, l.Addr().String())
	if err != nil {
		stop()
		return nil, err
	}
	q, err := tasksqueue.NewCloudTasks(client, tasksqueue.Config{Project: cfg.Project, Location: cfg.Location})
	if err != nil {
		client.Close()
		stop()
		return nil, err
	}
	return &Local{Server: srv, Queue: q, Host: l.Addr().String(), close: func() { client.Close(); stop() }}, nil
}

// Close stops the emulator and closes the client.
func (t *Local) Close() { t.close() }

// LoadQueueYAML reads and parses a queue.yaml.
func LoadQueueYAML(path string) ([]QueueConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w (run from the repository root)", err)
	}
	return ParseQueueYAML(data)
}
