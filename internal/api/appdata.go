package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/gin-gonic/gin"

	"socialstream/internal/derrors"
)

// appDataParams are the parameters of appdata.get, .update and .delete:
// Fields are the keys (all when empty), Data the values of an update.
type appDataParams struct {
	UserID  string       `json:"userId"`
	UserIDs list         `json:"userIds"` // several users to read
	GroupID string       `json:"groupId"`
	AppID   string       `json:"appId"`
	Fields  list         `json:"fields"`
	Data    appDataValue `json:"data"`
}

// appDataValue is an update's values: a JSON object of strings.
type appDataValue map[string]string

func (v *appDataValue) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || raw == nil {
		return derrors.New(derrors.InvalidArgument, "app data is a JSON object of keys and string values")
	}
	out := make(appDataValue, len(raw))
	for _, k := range slices.Sorted(maps.Keys(raw)) { // the first wrong one by name: the same answer each time
		r := raw[k]
		var s string
		if len(bytes.TrimSpace(r)) == 0 || r[0] != '"' || json.Unmarshal(r, &s) != nil {
			return derrors.New(derrors.InvalidArgument, fmt.Sprintf("app data values are strings; that of %.80q is not", k))
		}
		out[k] = s
	}
	*v = out
	return nil
}

func appDataFromRequest(c *gin.Context) (appDataParams, error) {
	p := appDataParams{UserID: c.Param("userId"), GroupID: c.Param("selector"), AppID: c.Param("appId")}
	users, err := splitList([]string{p.UserID})
	if err != nil {
		return p, err
	}
	if len(users) > 1 {
		p.UserID, p.UserIDs = "", users
	}
	if p.Fields, err = listFromQuery(c, "fields"); err != nil {
		return p, err
	}
	if c.Request.Method == "PUT" || c.Request.Method == "POST" {
		if err := decodeJSON(c.Request.Body, &p.Data); err != nil {
			return p, err
		}
	}
	return p, nil
}

// appDataUsers resolves the users a read names.
func (s *Server) appDataUsers(ctx context.Context, caller string, p appDataParams) ([]string, error) {
	refs := []string(p.UserIDs)
	if len(refs) == 0 {
		if p.UserID == "" {
			p.UserID = "@me"
		}
		refs = []string{p.UserID}
	}
	return s.resolveAll(ctx, caller, refs)
}

func checkAppDataGroup(g string) error {
	if g != "" && g != "@self" {
		return derrors.New(derrors.InvalidArgument, "app data is addressed under @self")
	}
	return nil
}

// appDataGet answers {userId: {key: value}} for each user named.
func (s *Server) appDataGet(ctx context.Context, caller string, p appDataParams) (any, error) {
	if err := checkAppDataGroup(p.GroupID); err != nil {
		return nil, err
	}
	users, err := s.appDataUsers(ctx, caller, p)
	if err != nil {
		return nil, err
	}
	data, err := s.appData.Get(ctx, users, p.AppID, p.Fields)
	if err != nil {
		return nil, err
	}
	return entry{data}, nil
}

// ownAppData checks that a write addresses the caller's own data.
func (s *Server) ownAppData(ctx context.Context, caller string, p appDataParams) error {
	if err := checkAppDataGroup(p.GroupID); err != nil {
		return err
	}
	if len(p.UserIDs) > 0 {
		return derrors.New(derrors.InvalidArgument, "app data is written for one user")
	}
	users, err := s.appDataUsers(ctx, caller, p)
	if err != nil {
		return err
	}
	if users[0] != caller {
		return derrors.New(derrors.PermissionDenied, "only its owner writes a user's app data")
	}
	return nil
}

func (s *Server) appDataUpdate(ctx context.Context, caller string, p appDataParams) (any, error) {
	if err := s.ownAppData(ctx, caller, p); err != nil {
		return nil, err
	}
	if p.Data == nil {
		return nil, derrors.New(derrors.InvalidArgument, "data is required: a JSON object of keys and string values")
	}
	return nil, s.appData.Update(ctx, caller, p.AppID, p.Data, p.Fields)
}

func (s *Server) appDataDelete(ctx context.Context, caller string, p appDataParams) (any, error) {
	if err := s.ownAppData(ctx, caller, p); err != nil {
		return nil, err
	}
	return nil, s.appData.Delete(ctx, caller, p.AppID, p.Fields)
}
