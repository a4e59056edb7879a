package tasksemu

import (
	"context"

	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// state is the queue's state as Cloud Tasks reports it.
func (q *queue) state() cloudtaskspb.Queue_State {
	if q.paused.Load() {
		return cloudtaskspb.Queue_PAUSED
	}
	return cloudtaskspb.Queue_RUNNING
}

// PauseQueue stops the queue's dispatches, as Cloud Tasks does: tasks may
// still be added, and none is dispatched until ResumeQueue.
func (s *Server) PauseQueue(ctx context.Context, req *cloudtaskspb.PauseQueueRequest) (*cloudtaskspb.Queue, error) {
	return s.setPaused(req.GetName(), true)
}

// ResumeQueue dispatches the queue's tasks again.
func (s *Server) ResumeQueue(ctx context.Context, req *cloudtaskspb.ResumeQueueRequest) (*cloudtaskspb.Queue, error) {
	return s.setPaused(req.GetName(), false)
}

func (s *Server) setPaused(name string, paused bool) (*cloudtaskspb.Queue, error) {
	for _, q := range s.queues {
		if q.name != name {
			continue
		}
		q.paused.Store(paused)
		select {
		case q.wake <- struct{}{}:
		default:
		}
		return q.proto(), nil
	}
	return nil, status.Errorf(codes.NotFound, "no queue %q", name)
}

// Hold pauses every queue and returns the function that resumes them: for
// a measure that must see an operation's jobs run after it answered, as
// they mostly do, and never during it.
func (s *Server) Hold() (release func()) {
	for _, q := range s.queues {
		_, _ = s.setPaused(q.name, true)
	}
	return func() {
		for _, q := range s.queues {
			_, _ = s.setPaused(q.name, false)
		}
	}
}
