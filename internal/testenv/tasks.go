package testenv

import (
	"testing"
	"time"

	"socialstream/internal/tasksemu"
)

// StartTasks starts a tasks emulator with the repository's queue.yaml for
// this test, stopped at its end. Call Server.SetTarget with the app's URL
// before enqueuing.
func StartTasks(t testing.TB) *tasksemu.Local { return StartTasksWith(t, tasksemu.Faults{}) }

// StartTasksWith is StartTasks with the emulator's fault mode set.
func StartTasksWith(t testing.TB, faults tasksemu.Faults) *tasksemu.Local {
	t.Helper()
	tasks, err := tasksemu.StartLocal(tasksemu.Config{Project: Project, Location: "test", Queues: Queues(t), DispatchDeadline: time.Minute, Faults: faults}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tasks.Close)
	return tasks
}

// Queues returns the queues of the repository's queue.yaml.
func Queues(t testing.TB) []tasksemu.QueueConfig {
	t.Helper()
	path, err := RepoFile("queue.yaml")
	if err != nil {
		t.Fatal(err)
	}
	qs, err := tasksemu.LoadQueueYAML(path)
	if err != nil {
		t.Fatal(err)
	}
	return qs
}
