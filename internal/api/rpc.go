package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
)

// MaxBatch is the most calls one JSON-RPC batch may hold.
const MaxBatch = 50

type rpcFunc func(ctx context.Context, caller string, params json.RawMessage) (any, error)

// method adapts an operation to JSON-RPC: params decode into P.
func method[P any](s *Server, op operation[P]) rpcFunc {
	op = withCursors(s, op)
	return func(ctx context.Context, caller string, raw json.RawMessage) (any, error) {
		var p P
		if len(bytes.TrimSpace(raw)) > 0 && string(bytes.TrimSpace(raw)) != "null" {
			if err := unmarshal(raw, &p); err != nil {
				if cerr := charge(ctx, costCall); cerr != nil {
					return nil, cerr
				}
				return nil, err
			}
		}
		if err := charge(ctx, costOf(p)); err != nil {
			return nil, err
		}
		return op(ctx, caller, p)
	}
}

func (s *Server) rpcMethods() map[string]rpcFunc {
	m := map[string]rpcFunc{
		"people.get":                 method(s, s.peopleGet),
		"people.create":              method(s, s.follow),
		"people.delete":              method(s, s.unfollow),
		"people.update":              method(s, s.peopleUpdate),
		"groups.get":                 method(s, s.groupsGet),
		"groups.create":              method(s, s.groupsCreate),
		"groups.join":                method(s, s.join),
		"groups.leave":               method(s, s.leave),
		"activities.get":             method(s, s.activitiesGet),
		"activities.search":          method(s, s.activitiesSearch),
		"activities.create":          method(s, s.activitiesCreate),
		"activities.delete":          method(s, s.activitiesDelete),
		"activities.update":          method(s, s.activitiesUpdate),
		"appdata.get":                method(s, s.appDataGet),
		"appdata.update":             method(s, s.appDataUpdate),
		"appdata.delete":             method(s, s.appDataDelete),
		"comments.get":               method(s, s.commentsGet),
		"comments.create":            method(s, s.commentsCreate),
		"comments.delete":            method(s, s.commentsDelete),
		"likes.get":                  method(s, s.likesGet),
		"likes.create":               method(s, s.likesCreate),
		"likes.delete":               method(s, s.likesDelete),
		"polls.vote":                 method(s, s.pollsVote),
		"scheduled.get":              method(s, s.scheduledGet),
		"conversations.get":          method(s, s.conversationsGet),
		"conversations.update":       method(s, s.conversationsRead),
		"conversations.delete":       method(s, s.conversationsDelete),
		"featuredTags.get":           method(s, s.featuredGet),
		"trends.get":                 method(s, s.trendsGet),
		"featuredTags.create":        method(s, s.featuredCreate),
		"featuredTags.delete":        method(s, s.featuredDelete),
		"scheduled.update":           method(s, s.scheduledUpdate),
		"scheduled.delete":           method(s, s.scheduledDelete),
		"notifications.get":          method(s, s.notificationsGet),
		"filters.get":                method(s, s.filtersGet),
		"filters.create":             method(s, s.filtersCreate),
		"filters.update":             method(s, s.filtersUpdate),
		"filters.delete":             method(s, s.filtersDelete),
		"reports.get":                method(s, s.reportsGet),
		"reports.create":             method(s, s.reportsCreate),
		"moderation.reports":         method(s, s.moderationReports),
		"moderation.act":             method(s, s.moderationAct),
		"moderation.log":             method(s, s.moderationLog),
		"moderation.grant":           method(s, s.moderationGrant),
		"moderation.notices":         method(s, s.moderationNotices),
		"notifications.read":         method(s, s.notificationsRead),
		"notifications.unread":       method(s, s.notificationsUnread),
		"albums.get":                 method(s, s.albumsGet),
		"albums.create":              method(s, s.albumsCreate),
		"albums.update":              method(s, s.albumsUpdate),
		"albums.delete":              method(s, s.albumsDelete),
		"albums.supportedFields":     method(s, supportedFields(albumFields)),
		"mediaItems.get":             method(s, s.mediaItemsGet),
		"mediaItems.create":          method(s, s.mediaItemsCreate),
		"mediaItems.update":          method(s, s.mediaItemsUpdate),
		"mediaItems.delete":          method(s, s.mediaItemsDelete),
		"mediaItems.supportedFields": method(s, supportedFields(mediaItemFields)),
	}
	names := slices.Sorted(maps.Keys(m))
	names = slices.Insert(names, 0, "system.listMethods")
	m["system.listMethods"] = method(s, func(context.Context, string, struct{}) (any, error) { return names, nil })
	return m
}

// rpcWrites reports whether a method may write: all but those that read.
func rpcWrites(method string) bool {
	switch method {
	case "moderation.reports", "moderation.log", "moderation.notices", "notifications.unread", "system.listMethods":
		return false
	}
	return !strings.HasSuffix(method, ".get") && !strings.HasSuffix(method, ".supportedFields")
}

// Shindig's shapes: which methods take several users (userId as a list),
// and for which a groupId of @self means nothing (osapi sends @self with
// every call that names no group).
var (
	rpcSeveralUsers = map[string]bool{"people.get": true, "appdata.get": true}
	rpcSelfIgnored  = map[string]bool{"people.create": true, "people.delete": true, "groups.get": true, "groups.join": true, "groups.leave": true}
)

// shindigParams rewrites a call's params from the forms Shindig's osapi
// client sends into the operations' own: userId as a string, a comma list
// or an array (@owner for the caller: a gadget's owner is its viewer
// here), several users as userIds; activityId as one id or a list
// (activityIds for activities.*, one id elsewhere); groupId @self dropped
// where it means nothing. one reports a single activityId of
// activities.get, whose answer is the activity itself.
func shindigParams(method string, raw json.RawMessage) (out json.RawMessage, one bool, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return raw, false, nil
	}
	var m map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, false, derrors.New(derrors.InvalidArgument, "params must be a JSON object")
	}
	if v, ok := m["userId"]; ok {
		var users list
		if err := json.Unmarshal(v, &users); err != nil {
			return nil, false, derrors.New(derrors.InvalidArgument, "userId is a string, a comma-separated string or an array of strings")
		}
		for i, u := range users {
			if u == "@owner" {
				users[i] = "@me"
			}
		}
		delete(m, "userId")
		switch {
		case len(users) == 1:
			m["userId"], _ = json.Marshal(users[0])
		case len(users) > 1 && !rpcSeveralUsers[method]:
			return nil, false, derrors.New(derrors.InvalidArgument, method+" takes one userId")
		case len(users) > 1:
			m["userIds"], _ = json.Marshal(users)
		}
	}
	if v, ok := m["groupId"]; ok && rpcSelfIgnored[method] && string(v) == `"@self"` {
		delete(m, "groupId")
	}
	if v, ok := m["activityId"]; ok {
		var acts list
		if err := json.Unmarshal(v, &acts); err != nil {
			return nil, false, derrors.New(derrors.InvalidArgument, "activityId is a string, a comma-separated string or an array of strings")
		}
		delete(m, "activityId")
		switch {
		case strings.HasPrefix(method, "activities."):
			if _, both := m["activityIds"]; both {
				return nil, false, derrors.New(derrors.InvalidArgument, "give activityId or activityIds, not both")
			}
			m["activityIds"], _ = json.Marshal(acts)
			one = len(acts) == 1 && method == "activities.get"
		case len(acts) > 1:
			return nil, false, derrors.New(derrors.InvalidArgument, method+" takes one activityId")
		case len(acts) == 1:
			m["activityId"], _ = json.Marshal(acts[0])
		}
	}
	out, err = json.Marshal(m)
	return out, one, err
}

// rpcResult is an operation's answer as a JSON-RPC result: the object
// itself for a single object, {} for nothing, the activity itself for one
// activityId.
func rpcResult(body any, one bool) any {
	switch b := body.(type) {
	case nil:
		return struct{}{}
	case entry:
		return b.Entry
	case statusEntry:
		return b.Entry
	case collection:
		if items := reflect.ValueOf(b.List); one && items.Kind() == reflect.Slice && items.Len() == 1 {
			return items.Index(0).Interface()
		}
	}
	return body
}

// rpcCall is one decoded call; err is set when the call itself is malformed,
// to be answered in its own slot.
type rpcCall struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	err    error
}

type rpcResponse struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Result any             `json:"result,omitempty"`
	Error  *errorDetail    `json:"error,omitempty"`
}

// parseRPC decodes a JSON-RPC body: one call object or a batch array. A body
// that is neither is an error for the whole request; a malformed call in a
// batch is an error in that call's slot only.
func parseRPC(data []byte) (calls []rpcCall, batch bool, err error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, false, derrors.New(derrors.InvalidArgument, "a JSON-RPC call or batch is required")
	}
	if err := checkText(data); err != nil {
		return nil, data[0] == '[', err
	}
	var raws []json.RawMessage
	switch data[0] {
	case '[':
		if err := json.Unmarshal(data, &raws); err != nil {
			return nil, true, derrors.New(derrors.InvalidArgument, "malformed JSON")
		}
		if len(raws) == 0 {
			return nil, true, derrors.New(derrors.InvalidArgument, "empty batch")
		}
		if len(raws) > MaxBatch {
			return nil, true, derrors.New(derrors.InvalidArgument, fmt.Sprintf("a batch holds at most %d calls", MaxBatch))
		}
		batch = true
	case '{':
		if !json.Valid(data) {
			return nil, false, derrors.New(derrors.InvalidArgument, "malformed JSON")
		}
		raws = []json.RawMessage{data}
	default:
		return nil, false, derrors.New(derrors.InvalidArgument, "the body must be a JSON-RPC object or array")
	}
	calls = make([]rpcCall, len(raws))
	for i, raw := range raws {
		var c struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := unmarshal(raw, &c); err != nil {
			calls[i].err = err
			continue
		}
		calls[i] = rpcCall{ID: c.ID, Method: c.Method, Params: c.Params}
		if c.Method == "" {
			calls[i].err = derrors.New(derrors.InvalidArgument, "method is required")
		}
	}
	return calls, batch, nil
}

func (s *Server) serveRPC(c *gin.Context) {
	data, err := io.ReadAll(c.Request.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.fail(c, errTooLarge)
			return
		}
		s.fail(c, derrors.New(derrors.InvalidArgument, "could not read the request body"))
		return
	}
	calls, batch, err := parseRPC(data)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]rpcResponse, len(calls))
	for i, call := range calls {
		out[i] = s.runRPC(c.Request.Context(), caller(c), call)
	}
	if batch {
		c.JSON(http.StatusOK, out)
		return
	}
	c.JSON(http.StatusOK, out[0])
}

func (s *Server) runRPC(ctx context.Context, caller string, call rpcCall) rpcResponse {
	resp := rpcResponse{ID: call.ID}
	err := call.err
	f, ok := s.rpc[call.Method]
	switch {
	case err == nil && ok:
		var params json.RawMessage
		var one bool
		if params, one, err = shindigParams(call.Method, call.Params); err != nil {
			if cerr := charge(ctx, costCall); cerr != nil {
				err = cerr
			}
			break
		}
		if err = permitsCall(ctx, rpcWrites(call.Method)); err != nil {
			break
		}
		if rpcWrites(call.Method) {
			ctx = accounts.Writing(ctx)
		}
		var body any
		if body, err = f(ctx, caller, params); err == nil {
			resp.Result = rpcResult(body, one)
		}
	case err == nil:
		err = derrors.New(derrors.Unimplemented, "no such method: "+call.Method)
		fallthrough
	default:
		// Each call of a batch counts, the malformed ones too.
		if cerr := charge(ctx, costCall); cerr != nil {
			err = cerr
		}
	}
	if err != nil {
		status, msg := derrors.Status(err)
		if status == derrors.StatusClientClosed || ctx.Err() != nil {
			s.log.InfoContext(ctx, "rpc call abandoned by its client", "method", call.Method, "err", err)
		} else if status >= 500 && status != http.StatusNotImplemented {
			s.log.ErrorContext(ctx, "rpc call failed", "method", call.Method, "err", err)
		} else {
			s.log.WarnContext(ctx, "rpc call refused", "method", call.Method, "status", status, "err", err)
		}
		resp.Result = nil
		resp.Error = &errorDetail{Code: status, Message: msg}
	}
	return resp
}
