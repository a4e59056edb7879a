package api

import (
	"strconv"

	"github.com/gin-gonic/gin"

	"socialstream/internal/derrors"
)

// Paging limits of the contract.
const (
	DefaultCount = 20
	MaxCount     = 100
	// MaxStartIndex bounds OpenSocial offset paging, which costs a skipped
	// entity read per step; deeper pages must use cursors.
	MaxStartIndex = 1000
)

// paging are the contract's paging parameters; nil means absent.
type pageParams struct {
	Count      *int   `json:"count"`
	StartIndex *int   `json:"startIndex"`
	Cursor     string `json:"cursor"`
}

func pagingFromQuery(c *gin.Context) (pageParams, error) {
	var p pageParams
	for _, f := range []struct {
		name string
		dst  **int
	}{{"count", &p.Count}, {"startIndex", &p.StartIndex}} {
		v, ok := c.GetQuery(f.name)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return p, derrors.New(derrors.InvalidArgument, f.name+" must be an integer")
		}
		*f.dst = &n
	}
	p.Cursor = c.Query("cursor")
	return p, nil
}

// limits checks the paging parameters and returns count and startIndex.
func (p pageParams) limits() (count, start int, err error) {
	count, start = DefaultCount, 0
	if p.Count != nil {
		count = *p.Count
		if count < 1 || count > MaxCount {
			return 0, 0, derrors.New(derrors.InvalidArgument, "count must be 1 to 100")
		}
	}
	if p.StartIndex != nil {
		start = *p.StartIndex
		if start < 0 || start > MaxStartIndex {
			return 0, 0, derrors.New(derrors.InvalidArgument, "startIndex must be 0 to 1000; use cursor for deeper pages")
		}
		if start > 0 && p.Cursor != "" {
			return 0, 0, derrors.New(derrors.InvalidArgument, "give cursor or startIndex, not both")
		}
	}
	return count, start, nil
}
