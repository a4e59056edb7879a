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
// mix used, today and the days the run touched, once the jobs are done.
//
// A hashtag is left out when the count of one of its people's posts
// turns on what the oracle cannot know: their standing changed (a limit
// or suspension deletes their uses, and what a job counts of the
// meanwhile turns on when it ran), their account is gone or going, a
// removal of the post is under way, or the post is the other server's.

// trendPeople are, for each hashtag the mix used and each day, the
// people whose posts count then; unsure are the hashtags left out.
func (m *model) trendPeople() (people map[string]map[trends.Day]map[string]bool, unsure map[string]bool) {
	people, unsure = map[string]map[trends.Day]map[string]bool{}, map[string]bool{}
	for _, p := range m.posts {
		for _, tag := range p.tags {
			if people[tag] == nil {
				people[tag] = map[trends.Day]map[string]bool{}
			}
			switch {
			case len(m.standings[p.author]) > 0 || m.suspending[p.author] > 0 || m.gone(p.author) || p.removing || p.note != "":
				unsure[tag] = true
			case !p.deleted && !p.removed && p.public() && p.warning == "" && p.repostOf == "":
				d := trends.DayOf(p.seqTime)
				if people[tag][d] == nil {
					people[tag][d] = map[string]bool{}
				}
				people[tag][d][p.author] = true
			}
		}
	}
	return people, unsure
}

// checkTrends reads the page of each hashtag the mix used, and compares
// the people of each day with the posts'.
func (o *oracle) checkTrends(ctx context.Context, rep *Report) error {
	o.m.mu.Lock()
	people, unsure := o.m.trendPeople()
	o.m.mu.Unlock()
	tags := make([]string, 0, len(people))
	for tag := range people {
		if !unsure[tag] {
			tags = append(tags, tag)
		}
	}
	slices.Sort(tags)
	for _, tag := range tags {
		got, err := o.tagHistory(ctx, tag)
		if err != nil {
			return err
		}
		for d, want := range people[tag] {
			n, ok := got[d]
			if !ok {
				continue // past the week shown
			}
			if n != int64(len(want)) {
				o.violate("#%s on day %d: %d people, want %d (%v)", tag, d, n, len(want), keys(want))
			}
		}
		for d, n := range got {
			if _, ok := people[tag][d]; !ok && n != 0 {
				o.violate("#%s on day %d: %d people, want none", tag, d, n)
			}
		}
	}
	rep.Checked += len(tags)
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
