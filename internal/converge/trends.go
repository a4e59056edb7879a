package converge

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"

	"socialstream/internal/trends"
)

// What trends: each hashtag's page shows its people of each day (its
// history's accounts), which the trend jobs keep: each person once a day,
// of public posts with no warning, neither deleted nor taken down. The
// oracle counts them from the posts and compares, for each hashtag the
// mix used, each day its page shows, once the jobs are done.
//
// Some people's count the oracle cannot know, and it takes either: of
// one whose standing changed (a limit or suspension deletes their uses,
// and what a job counts of the meanwhile turns on when it ran), whose
// account's deletion is under way, of a post a removal of which was
// under way, or of the other server's. A deleted account counts for
// nothing: its erasure deletes its uses.

// tagDay is what the oracle knows of a hashtag's people on a day: those
// it must count (sure), and those it may (maybe).
type tagDay struct{ sure, maybe map[string]bool }

// trendPeople are, for each hashtag the mix used and each day, the
// people whose posts count then.
func (m *model) trendPeople() map[string]map[trends.Day]*tagDay {
	out := map[string]map[trends.Day]*tagDay{}
	for _, p := range m.posts {
		sure, maybe := m.trendCount(p)
		if !sure && !maybe {
			continue
		}
		d := trends.DayOf(p.seqTime)
		for _, tag := range p.tags {
			if out[tag] == nil {
				out[tag] = map[trends.Day]*tagDay{}
			}
			td := out[tag][d]
			if td == nil {
				td = &tagDay{sure: map[string]bool{}, maybe: map[string]bool{}}
				out[tag][d] = td
			}
			if sure {
				td.sure[p.author] = true
			} else {
				td.maybe[p.author] = true
			}
		}
	}
	return out
}

// trendCount says whether p counts its author toward its hashtags on its
// day for sure (sure), or may (maybe).
func (m *model) trendCount(p *post) (sure, maybe bool) {
	switch {
	case p.note != "":
		return false, p.public() // the other server's: whether it is here turns on its deliveries
	case p.deleted || m.deleted(p.author) || !p.public() || p.warning != "" || p.repostOf != "":
		return false, false
	case p.removing || len(m.standings[p.author]) > 0 || m.suspending[p.author] > 0 || m.gone(p.author):
		return false, true
	}
	return !p.removed, false
}

// checkTrends reads the page of each hashtag the mix used, and compares
// the people of each day with the posts'.
func (o *oracle) checkTrends(ctx context.Context, rep *Report) error {
	people := o.m.trendPeople()
	tags := make([]string, 0, len(people))
	for tag := range people {
		tags = append(tags, tag)
	}
	slices.Sort(tags)
	for _, tag := range tags {
		got, err := o.tagHistory(ctx, tag)
		if err != nil {
			return err
		}
		for d, n := range got {
			td := people[tag][d]
			if td == nil {
				td = &tagDay{}
			}
			least, most := len(td.sure), len(td.sure)
			for p := range td.maybe {
				if !td.sure[p] {
					most++
				}
			}
			if n < int64(least) || n > int64(most) {
				o.violate("#%s on day %d: %d people, want %d to %d (surely %v, maybe %v)", tag, d, n, least, most, keys(td.sure), keys(td.maybe))
			}
			rep.Checked++
		}
	}
	return nil
}

// tagHistory reads a hashtag's people of each day its page shows.
func (o *oracle) tagHistory(ctx context.Context, tag string) (map[trends.Day]int64, error) {
	r, err := o.r.probe(ctx, "trends", "/api/v1/tags/"+url.PathEscape(tag), "", 200)
	if err != nil {
		return nil, err
	}
	days, _ := r.body["history"].([]any)
	if len(days) != trends.HistoryDays {
		return nil, fmt.Errorf("trends: #%s's page shows %d days: %v", tag, len(days), r.body)
	}
	out := map[trends.Day]int64{}
	for _, d := range days {
		day, _ := d.(map[string]any)
		start, err1 := strconv.ParseInt(str(day, "day"), 10, 64)
		n, err2 := strconv.ParseInt(str(day, "accounts"), 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("trends: #%s's history: %v", tag, d)
		}
		out[trends.Day(start/86400)] = n
	}
	return out, nil
}

// keys are a set's members, sorted.
func keys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
