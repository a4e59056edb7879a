package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"socialstream/internal/derrors"
	"socialstream/internal/moderation"
	"socialstream/internal/paging"
)

// reportParams are the parameters of reports.*: whose (the caller's),
// which, and the report a create files.
type reportParams struct {
	UserID   string                  `json:"userId"`
	ReportID string                  `json:"reportId"`
	Report   *moderation.ReportInput `json:"report"`
	pageParams
}

func reportsFromRequest(c *gin.Context) (reportParams, error) {
	p := reportParams{UserID: c.Param("userId"), ReportID: c.Param("reportId")}
	var err error
	if c.Request.Method == http.MethodPost {
		p.Report = &moderation.ReportInput{}
		err = decodeJSON(c.Request.Body, p.Report)
	} else {
		p.pageParams, err = pagingFromQuery(c)
	}
	return p, err
}

// reportsGet lists the caller's reports, newest first, or answers one.
func (s *Server) reportsGet(ctx context.Context, caller string, p reportParams) (any, error) {
	if err := s.checkOwn(ctx, caller, orMe(p.UserID), "a report"); err != nil {
		return nil, err
	}
	if p.ReportID != "" {
		r, err := s.moderation.One(ctx, caller, p.ReportID)
		if err != nil {
			return nil, err
		}
		return entry{r}, nil
	}
	page, err := p.page()
	if err != nil {
		return nil, err
	}
	list, next, err := s.moderation.Mine(ctx, caller, page)
	if err != nil {
		return nil, err
	}
	return paged(list, len(list), page, next), nil
}

var errNoReport = derrors.New(derrors.InvalidArgument, `give the report: {"accountId", "activityIds", "category", "comment"}`)

// reportsCreate files the caller's report.
func (s *Server) reportsCreate(ctx context.Context, caller string, p reportParams) (any, error) {
	if err := s.checkOwn(ctx, caller, orMe(p.UserID), "a report"); err != nil {
		return nil, err
	}
	if p.Report == nil {
		return nil, errNoReport
	}
	in := *p.Report
	var err error
	if in.AccountID, err = s.resolveGiven(ctx, caller, in.AccountID); err != nil {
		return nil, err
	}
	r, err := s.moderation.File(ctx, caller, in)
	if err != nil {
		return nil, err
	}
	return entry{r}, nil
}

// moderationParams are the parameters of moderation.*.
type moderationParams struct {
	ReportID string                  `json:"reportId"`
	State    string                  `json:"state"`
	UserID   string                  `json:"userId"`
	Role     *string                 `json:"role"`
	Action   *moderation.ActionInput `json:"action"`
	pageParams
}

func moderationFromRequest(c *gin.Context) (moderationParams, error) {
	p := moderationParams{ReportID: c.Param("reportId"), UserID: c.Param("userId"), State: c.Query("state")}
	var err error
	switch c.Request.Method {
	case http.MethodPost:
		p.Action = &moderation.ActionInput{}
		err = decodeJSON(c.Request.Body, p.Action)
	case http.MethodPut:
		var body struct {
			Role *string `json:"role"`
		}
		if err = decodeJSON(c.Request.Body, &body); err == nil {
			p.Role = body.Role
		}
	default:
		p.pageParams, err = pagingFromQuery(c)
	}
	return p, err
}

// moderationReports lists the reports in a state (open unless said),
// newest first, with what each reported; or answers one.
func (s *Server) moderationReports(ctx context.Context, caller string, p moderationParams) (any, error) {
	if p.ReportID != "" {
		r, err := s.moderation.Queued(ctx, caller, p.ReportID)
		if err != nil {
			return nil, err
		}
		return entry{r}, nil
	}
	page, err := p.page()
	if err != nil {
		return nil, err
	}
	state := p.State
	if state == "" {
		state = moderation.Open
	}
	list, next, err := s.moderation.Queue(ctx, caller, state, page)
	if err != nil {
		return nil, err
	}
	return paged(list, len(list), page, next), nil
}

var errNoAction = derrors.New(derrors.InvalidArgument, `give the action: {"action", "accountId", "reportId", "activityIds", "reason"}`)

// moderationAct takes a moderator's action.
func (s *Server) moderationAct(ctx context.Context, caller string, p moderationParams) (any, error) {
	if err := s.moderation.MayModerate(ctx, caller); err != nil {
		return nil, err // before anything the action names is looked up
	}
	if p.Action == nil {
		return nil, errNoAction
	}
	in := *p.Action
	var err error
	if in.AccountID, err = s.resolveGiven(ctx, caller, in.AccountID); err != nil {
		return nil, err
	}
	e, err := s.moderation.Act(ctx, caller, in)
	if err != nil {
		return nil, err
	}
	return entry{e}, nil
}

// moderationLog answers a page of the audit log, for admins.
func (s *Server) moderationLog(ctx context.Context, caller string, p moderationParams) (any, error) {
	page, err := p.page()
	if err != nil {
		return nil, err
	}
	list, next, err := s.moderation.Log(ctx, caller, page)
	if err != nil {
		return nil, err
	}
	return paged(list, len(list), page, next), nil
}

// moderationGrant sets a person's role, for admins.
func (s *Server) moderationGrant(ctx context.Context, caller string, p moderationParams) (any, error) {
	if err := s.moderation.MayGrant(ctx, caller); err != nil {
		return nil, err // before anything about the person is looked up
	}
	if p.Role == nil {
		return nil, derrors.New(derrors.InvalidArgument, `give the role: {"role": "moderator" | "admin" | ""}`)
	}
	if p.UserID == "" {
		return nil, derrors.New(derrors.InvalidArgument, "name the person: userId")
	}
	id, err := s.accounts.Resolve(ctx, caller, p.UserID)
	if err != nil {
		return nil, err
	}
	person, err := s.moderation.Grant(ctx, caller, id, *p.Role)
	if err != nil {
		return nil, err
	}
	return entry{person}, nil
}

// moderationNotices answers what moderation did to the caller's account.
func (s *Server) moderationNotices(ctx context.Context, caller string, p moderationParams) (any, error) {
	if err := s.checkOwn(ctx, caller, orMe(p.UserID), "a person's notices"); err != nil {
		return nil, err
	}
	page, err := p.page()
	if err != nil {
		return nil, err
	}
	list, next, err := s.moderation.Notices(ctx, caller, page)
	if err != nil {
		return nil, err
	}
	return paged(list, len(list), page, next), nil
}

// paged is a page of n items of list, whose next page starts at next.
func paged(list any, n int, page paging.Request, next string) collection {
	return collection{List: list, StartIndex: page.Offset, ItemsPerPage: page.Count,
		TotalResults: int64(page.Offset + n + boolInt(next != "")), NextCursor: next}
}

// resolveGiven resolves ref (an id, @me, @username:NAME), if given.
func (s *Server) resolveGiven(ctx context.Context, caller, ref string) (string, error) {
	if ref == "" {
		return "", nil
	}
	return s.accounts.Resolve(ctx, caller, ref)
}

// orMe is userID, or @me when it is not given (JSON-RPC).
func orMe(userID string) string {
	if userID == "" {
		return "@me"
	}
	return userID
}
