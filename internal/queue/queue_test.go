package queue

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/cloudtasks/apiv2/cloudtaskspb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func TestNewCreateTaskRequest(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	cfg := Config{Project: "p", Location: "us-central1"}
	parent := "projects/p/locations/us-central1/queues/rebuild"
	appReq := func(body string) *cloudtaskspb.AppEngineHttpRequest {
		return &cloudtaskspb.AppEngineHttpRequest{
			HttpMethod:  cloudtaskspb.HttpMethod_POST,
			RelativeUri: "/_tasks/rebuild",
			Headers:     map[string]string{"Content-Type": "application/json"},
			Body:        []byte(body),
		}
	}
	tests := []struct {
		name string
		cfg  Config
		task Task
		want *cloudtaskspb.CreateTaskRequest
	}{
		{
			name: "unnamed, now",
			cfg:  cfg,
			task: Task{Queue: "rebuild", Path: "/_tasks/rebuild", Body: []byte(`{"a":1}`)},
			want: &cloudtaskspb.CreateTaskRequest{Parent: parent, Task: &cloudtaskspb.Task{
				MessageType: &cloudtaskspb.Task_AppEngineHttpRequest{AppEngineHttpRequest: appReq(`{"a":1}`)},
			}},
		},
		{
			name: "named and delayed",
			cfg:  cfg,
			task: Task{Queue: "rebuild", Path: "/_tasks/rebuild", Body: []byte(`{}`), Name: "follow-1-2-v3", Delay: 30 * time.Second},
			want: &cloudtaskspb.CreateTaskRequest{Parent: parent, Task: &cloudtaskspb.Task{
				Name:         parent + "/tasks/" + TaskID("follow-1-2-v3"),
				ScheduleTime: timestamppb.New(now.Add(30 * time.Second)),
				MessageType:  &cloudtaskspb.Task_AppEngineHttpRequest{AppEngineHttpRequest: appReq(`{}`)},
			}},
		},
		{
			name: "routed to a service",
			cfg:  Config{Project: "p", Location: "us-central1", Service: "api", Version: "v2"},
			task: Task{Queue: "rebuild", Path: "/_tasks/rebuild", Body: []byte(`{}`)},
			want: &cloudtaskspb.CreateTaskRequest{Parent: parent, Task: &cloudtaskspb.Task{
				MessageType: &cloudtaskspb.Task_AppEngineHttpRequest{AppEngineHttpRequest: func() *cloudtaskspb.AppEngineHttpRequest {
					r := appReq(`{}`)
					r.AppEngineRouting = &cloudtaskspb.AppEngineRouting{Service: "api", Version: "v2"}
					return r
				}()},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NewCreateTaskRequest(tt.cfg, tt.task, now)
			if err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestTaskIDSpreadsNamesDeterministically(t *testing.T) {
	// Names in sequence, as the jobs make them, must not share a prefix.
	prefixes := map[string]bool{}
	for i := range 64 {
		name := fmt.Sprintf("fanout-%d-0", 7000000000000000000+i)
		id := TaskID(name)
		if id != TaskID(name) {
			t.Fatalf("TaskID(%q) differs between calls", name)
		}
		prefix, rest, _ := strings.Cut(id, "-")
		if rest != name || len(prefix) != prefixLen-1 {
			t.Fatalf("TaskID(%q) = %q: want 8 hex digits, a dash and the name", name, id)
		}
		prefixes[prefix[:2]] = true
	}
	// 64 names over 256 two-digit prefixes: a hash gives dozens of
	// distinct ones; a sequential scheme gives one or two.
	if len(prefixes) < 30 {
		t.Errorf("64 sequential names share %d two-digit prefixes; want them spread", len(prefixes))
	}
	long := strings.Repeat("a", MaxName)
	if _, err := NewCreateTaskRequest(Config{Project: "p", Location: "l"}, Task{Queue: "q", Path: "/x", Name: long}, time.Now()); err != nil {
		t.Errorf("a name of MaxName: %v", err)
	}
	if _, err := NewCreateTaskRequest(Config{Project: "p", Location: "l"}, Task{Queue: "q", Path: "/x", Name: long + "a"}, time.Now()); err == nil {
		t.Error("a name longer than MaxName is accepted")
	}
}

func TestNewCreateTaskRequestRejects(t *testing.T) {
	cfg := Config{Project: "p", Location: "l"}
	for name, task := range map[string]Task{
		"bad queue":      {Queue: "no/slash", Path: "/x"},
		"relative path":  {Queue: "q", Path: "x"},
		"bad name":       {Queue: "q", Path: "/x", Name: "has space"},
		"negative delay": {Queue: "q", Path: "/x", Delay: -time.Second},
	} {
		if _, err := NewCreateTaskRequest(cfg, task, time.Now()); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
