package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// The flows, each a step of the run: what it does, then what shows it.

func (r *fedRun) theyFind(ctx context.Context) (string, error) {
	var found struct{ Accounts []account }
	q := url.Values{"q": {"@amy@" + r.domain}, "resolve": {"true"}, "type": {"accounts"}}
	if err := r.a.call(ctx, "GET", "/api/v2/search?"+q.Encode(), nil, &found); err != nil {
		return "", err
	}
	if len(found.Accounts) != 1 || found.Accounts[0].Acct != "amy@"+r.domain {
		return "", fmt.Errorf("found %+v", found.Accounts)
	}
	r.amyThere = found.Accounts[0].ID
	return "found: " + found.Accounts[0].Acct, nil
}

// relationship reads how m stands with id.
func relationship(ctx context.Context, m masto, id string) (map[string]any, error) {
	var rel []map[string]any
	if err := m.call(ctx, "GET", "/api/v1/accounts/relationships?id[]="+url.QueryEscape(id), nil, &rel); err != nil {
		return nil, err
	}
	if len(rel) != 1 {
		return nil, fmt.Errorf("relationships: %v", rel)
	}
	return rel[0], nil
}

func (r *fedRun) theyFollow(ctx context.Context) (string, error) {
	if err := r.a.call(ctx, "POST", "/api/v1/accounts/"+r.amyThere+"/follow", url.Values{}, nil); err != nil {
		return "", err
	}
	err := r.until(ctx, "following, there", func() (bool, error) {
		rel, err := relationship(ctx, r.a, r.amyThere)
		return err == nil && rel["following"] == true, err
	})
	return "`following: true` there: our Accept came", err
}

func (r *fedRun) postReaches(ctx context.Context) (string, error) {
	text := "hello from here #fedflows " + r.stamp
	var s status
	if err := r.amy.call(ctx, "POST", "/api/v1/statuses", url.Values{"status": {text}}, &s); err != nil {
		return "", err
	}
	r.amyOwn = s.ID
	err := r.until(ctx, "in their home", func() (bool, error) {
		var home []status
		err := r.a.call(ctx, "GET", "/api/v1/timelines/home", nil, &home)
		_, ok := holding(home, r.stamp)
		return ok, err
	})
	return "in their home", err
}

func (r *fedRun) weFind(ctx context.Context) (string, error) {
	var a account
	if err := r.amy.call(ctx, "GET", "/api/v1/accounts/lookup?acct="+url.QueryEscape(r.b.name+"@"+r.there), nil, &a); err != nil {
		return "", err
	}
	r.bHere = a.ID
	return "found: " + a.Acct, nil
}

func (r *fedRun) weFollow(ctx context.Context) (string, error) {
	if err := r.amy.call(ctx, "POST", "/api/v1/accounts/"+r.bHere+"/follow", url.Values{}, nil); err != nil {
		return "", err
	}
	err := r.until(ctx, "following, here", func() (bool, error) {
		rel, err := relationship(ctx, r.amy, r.bHere)
		return err == nil && rel["following"] == true, err
	})
	return "`following: true` here: their Accept came", err
}

func (r *fedRun) theirPost(ctx context.Context) (string, error) {
	text := "@amy@" + r.domain + " a post from there " + r.stamp
	if err := r.b.call(ctx, "POST", "/api/v1/statuses", url.Values{"status": {text}}, &r.bPost); err != nil {
		return "", err
	}
	err := r.until(ctx, "in amy's home, and told", func() (bool, error) {
		var home []status
		if err := r.amy.call(ctx, "GET", "/api/v1/timelines/home", nil, &home); err != nil {
			return false, err
		}
		s, ok := holding(home, "a post from there "+r.stamp)
		r.bPostHere = s.ID
		var notes []struct {
			Type   string
			Status *status
		}
		if err := r.amy.call(ctx, "GET", "/api/v1/notifications", nil, &notes); err != nil {
			return false, err
		}
		for _, n := range notes {
			if ok && n.Type == "mention" && n.Status != nil && n.Status.ID == s.ID {
				return true, nil
			}
		}
		return false, nil
	})
	return "in amy's home, and amy told of the mention", err
}

func (r *fedRun) direct(ctx context.Context) (string, error) {
	text := "@" + r.b.name + "@" + r.there + " for you alone " + r.stamp
	if err := r.amy.call(ctx, "POST", "/api/v1/statuses", url.Values{"status": {text}, "visibility": {"direct"}}, nil); err != nil {
		return "", err
	}
	err := r.until(ctx, "their mention", func() (bool, error) {
		var notes []struct {
			Type   string
			Status *status
		}
		err := r.b.call(ctx, "GET", "/api/v1/notifications", nil, &notes)
		for _, n := range notes {
			if n.Type == "mention" && n.Status != nil && strings.Contains(n.Status.Content, "for you alone "+r.stamp) {
				return true, err
			}
		}
		return false, err
	})
	return "a `mention` notification there", err
}

func (r *fedRun) reply(ctx context.Context) (string, error) {
	if r.bPostHere == "" {
		return "", fmt.Errorf("their post never reached amy")
	}
	form := url.Values{"status": {"a reply from here " + r.stamp}, "in_reply_to_id": {r.bPostHere}}
	if err := r.amy.call(ctx, "POST", "/api/v1/statuses", form, nil); err != nil {
		return "", err
	}
	err := r.until(ctx, "in their post's thread", func() (bool, error) {
		var c struct{ Descendants []status }
		err := r.b.call(ctx, "GET", "/api/v1/statuses/"+r.bPost.ID+"/context", nil, &c)
		_, ok := holding(c.Descendants, "a reply from here "+r.stamp)
		return ok, err
	})
	return "in their post's thread there", err
}

func (r *fedRun) edit(ctx context.Context) (string, error) {
	if r.bPostHere == "" {
		return "", fmt.Errorf("their post never reached amy")
	}
	text := "@amy@" + r.domain + " a post from there, edited " + r.stamp
	if err := r.b.call(ctx, "PUT", "/api/v1/statuses/"+r.bPost.ID, url.Values{"status": {text}}, nil); err != nil {
		return "", err
	}
	err := r.until(ctx, "the edit here", func() (bool, error) {
		var s status
		err := r.amy.call(ctx, "GET", "/api/v1/statuses/"+r.bPostHere, nil, &s)
		return strings.Contains(s.Content, "edited "+r.stamp), err
	})
	return "amy reads the edited text", err
}

func (r *fedRun) favourite(ctx context.Context) (string, error) {
	var home []status
	if err := r.a.call(ctx, "GET", "/api/v1/timelines/home", nil, &home); err != nil {
		return "", err
	}
	s, ok := holding(home, "hello from here")
	if !ok {
		return "", fmt.Errorf("amy's post is not in their home")
	}
	if err := r.a.call(ctx, "POST", "/api/v1/statuses/"+s.ID+"/favourite", url.Values{}, nil); err != nil {
		return "", err
	}
	err := r.until(ctx, "the favourite here", func() (bool, error) {
		var mine status
		err := r.amy.call(ctx, "GET", "/api/v1/statuses/"+r.amyOwn, nil, &mine)
		return mine.FavouritesCount == 1, err
	})
	return "`favourites_count: 1` here", err
}

func (r *fedRun) block(ctx context.Context) (string, error) {
	if err := r.amy.call(ctx, "POST", "/api/v1/accounts/"+r.bHere+"/block", url.Values{}, nil); err != nil {
		return "", err
	}
	var found struct{ Accounts []account }
	q := url.Values{"q": {"@amy@" + r.domain}, "resolve": {"true"}, "type": {"accounts"}}
	if err := r.b.call(ctx, "GET", "/api/v2/search?"+q.Encode(), nil, &found); err != nil || len(found.Accounts) != 1 {
		return "", fmt.Errorf("amy, as they find her: %v %v", found.Accounts, err)
	}
	err := r.until(ctx, "blocked_by there", func() (bool, error) {
		rel, err := relationship(ctx, r.b, found.Accounts[0].ID)
		return err == nil && rel["blocked_by"] == true, err
	})
	return "`blocked_by: true` there: our Block came", err
}

func (r *fedRun) unfollow(ctx context.Context) (string, error) {
	if err := r.a.call(ctx, "POST", "/api/v1/accounts/"+r.amyThere+"/unfollow", url.Values{}, nil); err != nil {
		return "", err
	}
	err := r.until(ctx, "amy's followers here", func() (bool, error) {
		var me struct {
			FollowersCount int `json:"followers_count"`
		}
		err := r.amy.call(ctx, "GET", "/api/v1/accounts/verify_credentials", nil, &me)
		return me.FollowersCount == 0, err
	})
	return "amy has no follower left here", err
}

// profile changes amy's name and bio here: their server, which follows
// her and which she follows, shows the new ones (the Update of her actor).
func (r *fedRun) profile(ctx context.Context) (string, error) {
	name, bio := "Amy "+r.stamp, "a new bio "+r.stamp
	if err := r.amy.call(ctx, "PATCH", "/api/v1/accounts/update_credentials", url.Values{"display_name": {name}, "note": {bio}}, nil); err != nil {
		return "", err
	}
	err := r.until(ctx, "her new name and bio there", func() (bool, error) {
		var a struct {
			DisplayName string `json:"display_name"`
			Note        string `json:"note"`
		}
		err := r.a.call(ctx, "GET", "/api/v1/accounts/"+r.amyThere, nil, &a)
		return a.DisplayName == name && strings.Contains(a.Note, bio), err
	})
	return "her new name and bio shown there", err
}
