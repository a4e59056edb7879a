package testenv

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"socialstream/internal/queue"
	"socialstream/internal/tasksemu"
)

// Tasks is a running tasks emulator with the repository's queue.yaml and a
// Queue that enqueues to it through the real cloudtasks/apiv2 client.
type Tasks struct {
	Server *tasksemu.Server
	Queue  *queue.CloudTasks
	Host   string
}

// StartTasks starts a tasks emulator for this test, stopped at its end.
// Call Server.SetTarget with the app's URL before enqueuing.
func StartTasks(t testing.TB) *Tasks { return StartTasksWith(t, tasksemu.Faults{}) }

// StartTasksWith is StartTasks with the emulator's fault mode set.
func StartTasksWith(t testing.TB, faults tasksemu.Faults) *Tasks {
	t.Helper()
	qs := Queues(t)
	srv, err := tasksemu.New(tasksemu.Config{Project: Project, Location: "test", Queues: qs, DispatchDeadline: time.Minute, Faults: faults})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ctx, l)
	}()
	client, err := queue.Dial(ctx, l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		client.Close()
		cancel()
		<-done
	})
	q, err := queue.NewCloudTasks(client, queue.Config{Project: Project, Location: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return &Tasks{Server: srv, Queue: q, Host: l.Addr().String()}
}

// Queues returns the queues of the repository's queue.yaml.
func Queues(t testing.TB) []tasksemu.QueueConfig {
	t.Helper()
	path, err := RepoFile("queue.yaml")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := tasksemu.ParseQueueYAML(data)
	if err != nil {
		t.Fatal(err)
	}
	return qs
}
