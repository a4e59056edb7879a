package activities

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/blocks"
	"socialstream/internal/graph"
	"socialstream/internal/groups"
	"socialstream/internal/ids"
	"socialstream/internal/media"
	"socialstream/internal/notifications"
	"socialstream/internal/policy"
	"socialstream/internal/polls"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/tags"
	"socialstream/internal/trends"
	viewerstate "socialstream/internal/viewer"
)

// FanoutTask is the body of a fan-out job: write audience chunk Chunk of
// the activity, or, with Chunk 0, plan the jobs of every other chunk.
type FanoutTask struct {
	ActivityID string `json:"activityId"`
	Chunk      int    `json:"chunk"`
	// Before, set by the planning job on the jobs of the other chunks, is
	// when the post committed, as near as known: the chunk's followers
	// whose follow began before it get the post. A follow that began
	// after it has a job of its own, which copies the post or not by its
	// copyLimit; one that began before may have run its job before the
	// post committed, and so relies on this one. 0: everyone in the chunk.
	Before int64 `json:"before,omitempty"`
}

// FanoutJob copies a post to one more chunk of its author's followers.
var FanoutJob = queue.Job[FanoutTask]{Name: "fanout", Queue: queue.Fanout,
	TaskName: func(t FanoutTask) string { return fmt.Sprintf("fanout-%s-%d", t.ActivityID, t.Chunk) }}

var errIDTaken = errors.New("activities: id collision")

// Post stores a new activity by author and returns it. If in.ExternalID was
// used before by the same author, it returns that first activity and false.
//
// The Activity and its first audience chunk (the author and up to
// graph.ChunkCap followers) are written in one commit, so they see it at
// once. An author with more followers gets the other chunks from fan-out
// jobs; the planning job is enqueued before the commit (queue.Ahead), so a
// post can never commit without it (a job whose activity never appears
// gives up). So is the job that notifies the people it mentions, and the
// one that brings it to the followers of its tags.
//
// Post reads (post.read), decides (decidePost) and applies the decision
// (post.apply), in one transaction.
func (s *Service) Post(ctx context.Context, author string, in PostInput) (View, bool, error) {
	p, plan, err := s.post(ctx, author, in)
	if err != nil {
		return View{}, false, err
	}
	v, made, err := p.answer(ctx, plan)
	if err == nil && made && v.Author != nil {
		p.celebrate(ctx, v.Author.FollowersCount)
	}
	return v, made, err
}

// PostOnly is Post for a caller that shows the post to no one (an inbox
// taking another server's): it returns the post's id (the first's, if
// in.ExternalID was used before) and whether it made it, and reads
// nothing to show it, where Post's answer reads its author's state and
// card (what makes its author a celebrity reads their card alone, and
// only where the deployment has celebrities).
func (s *Service) PostOnly(ctx context.Context, author string, in PostInput) (string, bool, error) {
	p, plan, err := s.post(ctx, author, in)
	switch {
	case err != nil:
		return "", false, err
	case plan.existing != "":
		return plan.existing, false, nil
	}
	a := plan.activity
	if plan.replay != nil {
		a = plan.replay
	}
	if p.mayCelebrate() {
		if person, ok, err := accounts.Load(ctx, s.db, author); err == nil && ok {
			p.celebrate(ctx, person.FollowersCount) // best effort, as celebrate is
		}
	}
	return ids.Format(a.Seq), true, nil
}

// post checks, reads, decides and commits a post: Post and PostOnly but
// their answers.
func (s *Service) post(ctx context.Context, author string, in PostInput) (*posting, postPlan, error) {
	if err := in.Check(s.now()); err != nil {
		return nil, postPlan{}, err
	}
	p := &posting{s: s, author: author, in: in}
	if err := p.prepare(ctx); err != nil {
		return nil, postPlan{}, err
	}
	var (
		plan postPlan
		err  error
	)
	seq := s.ids.Next()
	for attempt := 0; ; attempt++ {
		var jobs queue.Ahead
		plan, err = p.commit(ctx, &jobs, seq)
		if jobs.Enqueued(p.fanout(seq).Name) {
			// Even after an error: a commit may have applied all the same.
			s.stampCommitted(ctx, ids.Format(seq))
		}
		if errors.Is(err, errIDTaken) && attempt < 3 {
			seq = s.ids.Next() // a new id, with jobs of its own
			continue
		}
		break
	}
	if (in.repostOf != "" || in.InReplyTo != "") && errors.Is(err, store.ErrGone) {
		err = ErrNoSuchActivity // what it shares or answers was deleted since it was read
	}
	if err != nil {
		return nil, postPlan{}, fmt.Errorf("activities.Post(%s): %w", author, err)
	}
	if p.trended && trends.Sampled(in.shared.LikesCount+in.shared.RepostsCount+1) {
		// Best effort, as trends.Bump says: the repost has committed.
		sub, _ := ReactionTrend(in.shared, policy.Account{})
		_ = trends.Bump(ctx, s.db, sub, trends.DayOf(ids.Time(seq)))
	}
	return p, plan, nil
}

// mayCelebrate reports whether the author may become a celebrity with
// this post: the deployment has celebrities, and they are not one.
func (p *posting) mayCelebrate() bool { return p.s.cfg.CelebrityFollowers > 0 && !p.celebrity }

// celebrate makes the author a celebrity, once their post has committed,
// if they are not one and their followers have reached the deployment's
// threshold: best effort, as their next post asks again.
func (p *posting) celebrate(ctx context.Context, followers int64) {
	if !p.mayCelebrate() || followers < p.s.cfg.CelebrityFollowers {
		return
	}
	_ = graph.CelebrityJob.Enqueue(ctx, p.s.queue, graph.CelebrityTask{User: p.author}, 0)
}

// posting is one Post under way: what it read before its transaction.
type posting struct {
	s        *Service
	author   string
	in       PostInput
	tagged   []string // its tags, parsed
	link     string   // its first link, which gets a card
	mentions []string // the people it names, as found before the transaction
	// mentionNames are their usernames, by id, as the text wrote them.
	mentionNames map[string]string
	chunks       int // the author's follower chunks, as read before it
	// shareNote, for a repost, tells the author of what it shares, in
	// its transaction.
	shareNote notifications.Event
	// A reply's: what it answers (as the author could see it then), and,
	// when that is someone else's, who is answered and which of the
	// author's first chunk of followers, checked before the transaction,
	// follow them (a reply reaches those alone at home).
	parent     *Activity
	answers    string
	checked    map[string]bool
	alsoFollow map[string]bool
	// trended, for a repost, says its transaction made its author's use
	// of what it shares new (package trends), to bump once committed.
	trended bool
	// celebrity: the author is a celebrity (package graph), as read
	// before the transaction.
	celebrity bool
}

func (p *posting) prepare(ctx context.Context) error {
	var err error
	if p.tagged, err = tags.Parse(p.in.Title + "\n" + p.in.Body); err != nil {
		return err
	}
	if p.in.repostOf == "" {
		p.link = p.s.linkOf(p.in.Title, p.in.Body)
	}
	if p.mentions, p.mentionNames, err = p.s.mentionsOf(ctx, p.in.Title+"\n"+p.in.Body, p.in.ExternalID, p.in.Mentions); err != nil {
		return err
	}
	if p.in.InReplyTo != "" {
		if err := p.prepareReply(ctx); err != nil {
			return err
		}
	}
	// The planning job must be enqueued before the commit of an activity
	// with more than one chunk; the author may pass from one chunk to two
	// between this read and the commit (then the transaction needs it).
	// Whether the author is a celebrity is read here too, once: a mark
	// is never taken back (but with the account), so what this read
	// says holds at the commit.
	l := p.s.db.Lookup()
	chunks := graph.ReadChunkCount(l, p.author)
	var celebrity store.Ref
	if p.s.cfg.CelebrityFollowers > 0 {
		celebrity = graph.ReadCelebrity(l, p.author)
	}
	if err := l.Run(ctx); err != nil {
		return fmt.Errorf("activities.Post(%s): %w", p.author, err)
	}
	p.chunks, p.celebrity = chunks(), celebrity.Found()
	if p.in.repostOf != "" {
		p.shareNote = notifications.Event{Type: notifications.Repost, ActorID: p.author, Recipients: []string{p.in.repostOfUser},
			ActivityID: p.in.repostOf, ID: fmt.Sprintf("repost-%s-%s", p.in.repostOf, p.author)}
	}
	return nil
}

// prepareReply reads what a reply answers (what a repost shares, for a
// repost), which its author must be able to see, and which of the
// author's first chunk of followers follow the person answered.
func (p *posting) prepareReply(ctx context.Context) error {
	parent, err := p.s.Visible(ctx, p.author, p.in.InReplyTo)
	if err != nil {
		return err
	}
	if parent.RepostOf != "" {
		if parent, err = p.s.Visible(ctx, p.author, parent.RepostOf); err != nil {
			return err
		}
	}
	p.parent = parent
	if parent.UserID == p.author {
		return nil // a thread of one's own reaches every follower
	}
	p.answers = parent.UserID
	l := p.s.db.Lookup()
	follows := graph.ReadFollowers(l, p.author)
	if err := l.Run(ctx); err != nil {
		return err
	}
	p.checked = map[string]bool{}
	for _, f := range follows.First() {
		p.checked[f] = true
	}
	p.alsoFollow, err = graph.ReachesAmong(ctx, p.s.db, p.answers, follows.First())
	return err
}

// poll is the poll the post of id seq carries, if any: its votes are
// the post's (its id).
func (p *posting) poll(seq int64) *polls.Poll {
	if p.in.poll == nil {
		return nil
	}
	poll := *p.in.poll
	poll.ID = ids.Format(seq)
	return &poll
}

// replyNote tells the person a reply of id answers, in its transaction.
func (p *posting) replyNote(id string) notifications.Event {
	return notifications.Event{Type: notifications.Reply, ActorID: p.author, Recipients: []string{p.answers},
		ActivityID: id, ID: "reply-" + id}
}

// mentioned are those a post's mention job tells (told).
func (p *posting) mentioned() []string { return told(p.mentions, p.answers) }

// told are those of mentions a post's mention job tells: all but the
// person a reply answers, whom its reply notification tells.
func told(mentions []string, answers string) []string {
	return slices.DeleteFunc(slices.Clone(mentions), func(m string) bool { return m == answers })
}

// The jobs a post of id seq may need.
func (p *posting) fanout(seq int64) queue.Pending {
	return FanoutJob.Pending(p.s.queue, FanoutTask{ActivityID: ids.Format(seq)}, 0)
}

func (p *posting) mention(seq int64) queue.Pending {
	id := ids.Format(seq)
	e := notifications.Event{Type: notifications.Mention, ActorID: p.author, Recipients: p.mentioned(), ActivityID: id, ID: mentionEvent(id, 0)}
	return p.s.notes.Notifying(e)
}

func (p *posting) tags(seq int64) queue.Pending {
	return TagJob.Pending(p.s.queue, TagTask{ActivityID: ids.Format(seq), Add: p.tagged}, 0)
}

// keeping is the job that keeps a celebrity's post among their newest
// (celebrity.go). Its transaction alone, not the post's, writes them: a
// celebrity's posts at once (a server that sends several) would
// otherwise wait on each other's commits.
func (p *posting) keeping(seq int64) queue.Pending {
	return KeepJob.Pending(p.s.queue, KeepTask{ActivityID: ids.Format(seq)}, 0)
}

// expected are the jobs the reads before the post of id seq foresee,
// enqueued ahead of its commit.
func (p *posting) expected(seq int64) []queue.Pending {
	id := ids.Format(seq)
	var expected []queue.Pending
	if p.in.repostOf != "" {
		expected = append(expected, p.s.notes.Expecting(p.shareNote))
	}
	if p.answers != "" {
		expected = append(expected, p.s.notes.Expecting(p.replyNote(id)))
	}
	if p.chunks > 1 {
		expected = append(expected, p.fanout(seq))
	}
	if p.celebrity && celebrityPost(p.in.Visibility, p.in.repostOf, p.answers) {
		expected = append(expected, p.keeping(seq))
	}
	if len(p.mentioned()) > 0 {
		expected = append(expected, p.mention(seq))
	}
	if direct(p.in.Visibility, p.mentions) {
		expected = append(expected, p.s.conversationJob(id, p.mentionNames))
	}
	if len(p.tagged) > 0 && listed(p.in.Visibility) {
		expected = append(expected, p.tags(seq))
	}
	if poll := p.poll(seq); poll != nil {
		expected = append(expected, polls.Closing(p.s.queue, id, p.author, poll, p.s.now()))
	}
	if p.link != "" {
		expected = append(expected, p.s.cardJob(id, p.link, 0))
	}
	if len(p.tagged) > 0 || p.link != "" {
		expected = append(expected, p.s.trendJob(id, 0, p.in.Visibility)...)
	}
	if names := slices.Collect(maps.Values(p.mentionNames)); p.s.cfg.Publisher != nil && !fromElsewhere(p.in.ExternalID) &&
		published(p.in.Visibility, p.in.repostOf != "", names) {
		named := p.in.repostOf != "" || mentionsElsewhere(names) || p.parent != nil && fromElsewhere(p.parent.ExternalID)
		expected = append(expected, p.s.cfg.Publisher.Publishing(p.author, id, named))
	}
	return expected
}

// activity is the activity the post of id seq makes, as its input says.
func (p *posting) activity(seq int64) *Activity {
	mine := &Activity{
		Seq: seq, UserID: p.author, AppID: p.in.AppID, Title: p.in.Title, Body: p.in.Body, URL: p.in.URL,
		PostedTime: p.s.now().UnixMilli(), ExternalID: p.in.ExternalID, MentionIDs: p.mentions, MentionNames: namesOf(p.mentions, p.mentionNames), Tags: p.tagged,
		SpoilerText: p.in.SpoilerText, Sensitive: p.in.Sensitive, Language: p.in.Language, Joined: p.in.Joined && p.in.Body != "",
	}
	mine.Poll, mine.Link = p.poll(seq), p.link
	if a := p.parent; a != nil {
		mine.InReplyTo, mine.InReplyToUser, mine.Thread = ids.Format(a.Seq), a.UserID, a.Thread
		if mine.Thread == "" {
			mine.Thread = mine.InReplyTo
		}
		mine.Ancestors = append([]string{mine.InReplyTo}, a.Ancestors...)
		mine.Ancestors = mine.Ancestors[:min(len(mine.Ancestors), KeptAncestors)]
	}
	return mine
}

// commit runs the transaction of the post of id seq, with its jobs
// enqueued ahead: those the reads before it foresee, and those its own
// reads find needed.
func (p *posting) commit(ctx context.Context, jobs *queue.Ahead, seq int64) (postPlan, error) {
	var plan postPlan
	err := jobs.Commit(ctx, p.expected(seq), func() error {
		mine := p.activity(seq)
		return p.s.db.Update(ctx, func(tx *store.Tx) error {
			r, err := p.read(ctx, tx, mine)
			if err != nil {
				return err
			}
			if plan, err = decidePost(r.facts); err != nil {
				return err
			}
			var need []queue.Pending
			for _, j := range []struct {
				needed bool
				job    func(int64) queue.Pending
			}{{plan.fanout, p.fanout}, {plan.mention, p.mention}, {plan.tags, p.tags}, {plan.activity != nil && plan.activity.Celebrity, p.keeping}} {
				if j.needed {
					need = append(need, j.job(seq))
				}
			}
			if len(plan.bells) > 0 {
				need = append(need, p.s.notes.Notifying(statusEvent(ids.Format(seq), plan.activity, 0, plan.bells)))
			}
			if err := jobs.Need(need...); err != nil {
				return err
			}
			return p.apply(tx, r, plan)
		})
	})
	return plan, err
}

// postRead is what a post's transaction read: the facts its decision
// takes, and what applying it needs of the reads.
type postRead struct {
	facts    postFacts
	note     *notifications.Pending
	own      *viewerstate.Ref
	pictures func(string) ([]*datastore.Key, []any, []media.Attached, error)
	// trend, for a repost of what may trend, is its author's use of it
	// today, marked when their account counts too (reposter).
	trend    *trends.Use
	reposter policy.Account
}

func (p *posting) read(ctx context.Context, tx *store.Tx, mine *Activity) (postRead, error) {
	s, in, id := p.s, p.in, ids.Format(mine.Seq)
	var (
		ext      externalID
		prior    Activity
		prev     Repost
		used     store.Ref
		reposted store.Ref
		seen     *Seen // what the policy asks of a repost's shared activity
		r        = postRead{facts: postFacts{mine: mine, visibility: in.Visibility, repostOf: in.repostOf, repostOfUser: in.repostOfUser,
			answers: p.answers, alsoFollow: map[string]bool{}, names: p.mentionNames}}
		late     map[string]*graph.Tie // a reply's: follows of the person answered by followers not checked before
		answered store.Ref             // a reply's: the follow of its author by the person answered, if the policy asks
		l        = tx.Lookup()
		taken    = l.Add(Key(s.db, id), &prior)
		follows  = graph.ReadFollowers(l, p.author)
		inGroups = groups.ReadGroupsOf(l, p.author)
		me       = accounts.Read(l, p.author)
		named    = make([]*accounts.Record, len(p.mentions))
		between  = make([]*blocks.Between, len(p.mentions))
	)
	if len(in.Media) > 0 {
		r.pictures = media.ReadLoose(l, in.Media, in.HeldBy)
	}
	if in.repostOf != "" {
		reposted = l.Add(RepostKey(s.db, in.repostOf, p.author), &prev)
		r.own = viewerstate.Read(l, p.author) // lists the repost
		// The shared activity itself is not read: every reaction to it
		// writes it, so a read would queue each repost behind them all.
		// What decides whether the reposter may see it (its author's
		// standing, blocks, a follow) is read here; that it is still
		// there is checked by the count's transform at the commit.
		seen = ReadSeen(l, p.author, in.shared)
		r.note = s.notes.PrepareChecked(l, p.shareNote, me)
		if sub, counts := ReactionTrend(in.shared, policy.Account{Exists: true}); counts && s.cfg.Trends != nil {
			r.trend = trends.ReadUse(l, sub, p.author, trends.DayOf(ids.Time(mine.Seq)))
		}
	}
	if p.parent != nil {
		seen = ReadSeen(l, p.author, p.parent) // hidden from the author since?
	}
	if p.answers != "" {
		r.note = s.notes.PrepareChecked(l, p.replyNote(id), me)
		if policy.NeedsFollow(p.answers, policy.Post{Author: p.author, Visibility: in.Visibility, Mentions: p.mentions}, policy.Account{Exists: true}, true) {
			answered = graph.Follows(l, p.answers, p.author)
		}
		l.Then(func() {
			late = map[string]*graph.Tie{}
			for _, f := range follows.First() {
				if !p.checked[f] && f != p.answers {
					late[f] = graph.Reaches(l, f, p.answers)
				}
			}
		})
	}
	if in.ExternalID != "" {
		used = l.Add(externalIDKey(s.db, p.author, in.ExternalID), &ext)
	}
	// The people mentioned, read again here: one deleted or blocking
	// since the names were looked up is not mentioned.
	for i, m := range p.mentions {
		named[i], between[i] = accounts.Read(l, m), blocks.ReadBetween(l, m, p.author)
	}
	if err := l.Run(ctx); err != nil {
		return r, err
	}
	f := &r.facts
	f.mayAct = me.MayAct() // deleted, or suspended with a token another instance still trusts
	r.reposter = me.Account()
	mine.Indexable = me.Indexable()
	if taken.Found() {
		f.prior = &prior
	}
	if used.Found() {
		f.usedBy, f.forgotten = ext.ActivityID, ext.Gone
	}
	if reposted.Found() {
		f.reposted = prev.RepostID
	}
	if seen != nil {
		f.hidden = seen.Err()
	}
	f.chunks, f.firstFollowers, f.groups = follows.Chunks(), follows.First(), inGroups.IDs()
	f.bells, f.quiet = follows.FirstBells(), follows.FirstQuiet()
	for id, ok := range p.alsoFollow {
		f.alsoFollow[id] = ok
	}
	for id, ref := range late {
		f.alsoFollow[id] = ref.Found()
	}
	f.answeredFollows = answered.Found()
	f.celebrity = p.celebrity
	for i, m := range p.mentions {
		if named[i].Exists() && !between[i].Any() {
			f.mentionable = append(f.mentionable, m)
		}
	}
	return r, nil
}

// postFacts is what decidePost decides on.
type postFacts struct {
	mine                   *Activity // the activity the input makes, its id's and time's
	visibility             string
	repostOf, repostOfUser string // a repost's
	mayAct                 error  // the author's standing
	prior                  *Activity
	usedBy                 string // the activity the input's externalId already names
	forgotten              bool   // its server deleted the post the externalId names (Forget)
	reposted               string // the author's earlier repost of what this one shares
	hidden                 error  // why the author may not see what a repost shares
	chunks                 int    // the author's follower chunks
	firstFollowers         []string
	// Of firstFollowers, those told of each post (bells) and those whose
	// home takes no reposts (quiet).
	bells, quiet []string
	groups       []string          // the author's groups
	mentionable  []string          // those mentioned who exist and block no one of the two
	names        map[string]string // their usernames, by id
	// answers, on a reply to someone else, is who it answers; alsoFollow
	// says which of firstFollowers follow them, and answeredFollows
	// whether they follow the author (where the policy asks).
	answers         string
	alsoFollow      map[string]bool
	answeredFollows bool
	// celebrity: the author is one (package graph).
	celebrity bool
}

// postPlan is what a post writes, or which earlier one it answers.
type postPlan struct {
	// replay is the post itself, found by a transaction run again after
	// a commit that applied but answered an error.
	replay *Activity
	// existing is the earlier activity the post turns out to be: its
	// externalId's, or the author's earlier repost of the same.
	existing string
	activity *Activity
	// audiences are chunk 0's and its overflows' (see overflowKey), in
	// order: the author and their first chunk of followers, or, for the
	// mentioned alone, they and the author.
	audiences []*Audience
	// The jobs that must be enqueued before the commit.
	fanout, mention, tags bool
	// tell: the notification the transaction prepared is written (a
	// repost's to the author of what it shares; a reply's to the person
	// answered, if they may see it).
	tell bool
	// bells are those of the first chunk its job tells of the post
	// (rings).
	bells []string
}

// decidePost decides what a post writes, from what its transaction read.
func decidePost(f postFacts) (postPlan, error) {
	switch {
	case f.mayAct != nil:
		return postPlan{}, f.mayAct
	case f.prior != nil && f.prior.UserID == f.mine.UserID && f.prior.PostedTime == f.mine.PostedTime:
		return postPlan{replay: f.prior}, nil
	case f.prior != nil:
		return postPlan{}, errIDTaken
	case f.forgotten:
		return postPlan{}, ErrForgotten
	case f.usedBy != "":
		return postPlan{existing: f.usedBy}, nil
	case f.reposted != "":
		return postPlan{existing: f.reposted}, nil // reposting again: the first repost
	case f.hidden != nil:
		return postPlan{}, f.hidden // hidden from the reposter since Repost read it
	}
	a := *f.mine
	reach := f.visibility != MentionedOnly
	a.Visibility, a.VisibleTo = f.visibility, visibleTo(f.visibility)
	a.Chunks = 1
	if reach {
		a.Chunks = max(1, f.chunks)
	}
	if listed(f.visibility) {
		a.GroupIDs = f.groups // group feeds hold public activities alone
	}
	a.MentionIDs, a.MentionNames = f.mentionable, namesOf(f.mentionable, f.names)
	a.RepostOf, a.RepostOfUser = f.repostOf, f.repostOfUser
	// A celebrity's post that reaches every follower alike copies none of
	// them: their homes merge it in (celebrity.go). Its fan-out jobs
	// still tell those who asked.
	a.Celebrity = f.celebrity && celebrityPost(f.visibility, f.repostOf, f.answers)
	plan := postPlan{activity: &a, fanout: reach && f.chunks > 1, mention: len(told(a.MentionIDs, f.answers)) > 0,
		tags: len(a.Tags) > 0 && listed(f.visibility)}
	// A reply tells the person it answers only what the policy lets them
	// see: not one for followers they are not among, nor one for the
	// mentioned that does not name them.
	plan.tell = f.repostOf != "" || f.answers != "" && policy.Addressed(f.answers, a.post(), f.answeredFollows)
	if !reach {
		plan.audiences = []*Audience{mentionedAudience(&a)}
		return plan, nil
	}
	rest := []string{a.UserID}
	if !a.Celebrity {
		rest = append(rest, replyAudience(reached(&a, f.firstFollowers, f.quiet), a.UserID, f.answers, f.alsoFollow)...)
	}
	if rings(&a) {
		plan.bells = f.bells
	}
	for j := 0; len(rest) > 0 && j <= maxOverflow; j++ {
		aud := &Audience{FollowerIDs: rest[:min(len(rest), AudienceChunkSize)], Seq: a.Seq, UserID: a.UserID, Answers: f.answers, Repost: a.RepostOf != "",
			Celebrity: a.Celebrity}
		rest = rest[len(aud.FollowerIDs):]
		if err := checkAudience(aud); err != nil {
			return postPlan{}, err
		}
		plan.audiences = append(plan.audiences, aud)
	}
	return plan, nil
}

// replyAudience keeps, of a reply's followers, those it reaches at home:
// those who follow the person it answers too, and that person (after
// Mastodon's). A post that answers no one else reaches them all.
func replyAudience(followers []string, author, answers string, alsoFollow map[string]bool) []string {
	if answers == "" || answers == author {
		return followers // every follower, as the policy has it, with no copy
	}
	var out []string
	for _, f := range followers {
		if policy.ReplyReaches(f, author, answers, alsoFollow[f]) {
			out = append(out, f)
		}
	}
	return out
}

// apply writes what plan says, in tx.
func (p *posting) apply(tx *store.Tx, r postRead, plan postPlan) error {
	a := plan.activity
	if a == nil {
		return nil // answered by an earlier activity
	}
	s, id := p.s, ids.Format(a.Seq)
	puts := []*datastore.Key{Key(s.db, id)}
	vals := []any{a}
	for j, aud := range plan.audiences {
		key := overflowKey(s.db, id, 0, j)
		puts, vals = append(puts, key), append(vals, aud)
		tx.Touches(key, aud.FollowerIDs...) // a new activity's: in no home before
	}
	if p.in.ExternalID != "" {
		puts, vals = append(puts, externalIDKey(s.db, p.author, p.in.ExternalID)), append(vals, &externalID{ActivityID: id})
	}
	if r.pictures != nil {
		keys, items, attached, err := r.pictures(p.author)
		if err != nil {
			return err
		}
		media.SetActivity(items, id)
		a.Media = attached
		puts, vals = append(puts, keys...), append(vals, items...)
	}
	if a.RepostOf != "" {
		puts = append(puts, RepostKey(s.db, a.RepostOf, p.author))
		vals = append(vals, &Repost{ActivityID: a.RepostOf, UserID: p.author, RepostID: id, Created: s.now().UTC()})
		if err := tx.Increment(Key(s.db, a.RepostOf), map[string]int64{"repostsCount": 1}); err != nil {
			return err
		}
		r.own.Edit().SetRepost(a.RepostOf, true)
		if err := r.own.Save(tx); err != nil {
			return err
		}
		p.trended = false
		if r.trend != nil && policy.TrendingBy(r.reposter) {
			fresh, err := r.trend.Mark(tx, id, true)
			if err != nil {
				return err
			}
			p.trended = fresh
		}
	}
	if err := p.count(tx, a); err != nil {
		return err
	}
	if r.note != nil && plan.tell {
		if _, err := r.note.Write(tx); err != nil {
			return err
		}
	}
	return tx.PutMulti(puts, vals)
}

// answer is what Post answers once plan is committed.
func (p *posting) answer(ctx context.Context, plan postPlan) (View, bool, error) {
	s, author, reposting := p.s, p.author, p.in.repostOf != ""
	if plan.existing != "" {
		vs, err := s.Get(ctx, author, author, "", []string{plan.existing})
		if err != nil {
			return View{}, false, err
		}
		if len(vs) == 0 {
			if reposting {
				return View{}, false, ErrNoSuchActivity // the shared activity was taken down since
			}
			return View{}, false, fmt.Errorf("activities.Post(%s): externalId names missing activity %s", author, plan.existing)
		}
		return vs[0], false, nil
	}
	a := plan.activity
	if plan.replay != nil {
		a = plan.replay
	}
	vs, err := s.views(ctx, author, []*datastore.Key{Key(s.db, ids.Format(a.Seq))}, []*Activity{a}, "")
	if err == nil && len(vs) == 0 && reposting {
		return View{}, false, ErrNoSuchActivity // the shared activity was taken down just after
	}
	if err != nil || len(vs) != 1 {
		return View{}, false, fmt.Errorf("activities.Post(%s): view: %w", author, err)
	}
	return vs[0], true, nil
}

// stampCommitted records on a post that has just committed, and has not
// answered yet, the time (Activity.Committed) that tells its fan-out jobs
// whose follows came before it. Best effort: without it, the planning job
// waits for it, then (GiveUpAfter past the post) takes the time it first
// found the post, a later one.
func (s *Service) stampCommitted(ctx context.Context, id string) {
	now := s.now().UnixMicro()
	for range 3 { // a failed call is retried: the planning job waits for it
		err := s.db.Update(ctx, func(tx *store.Tx) error {
			var a Activity
			if ok, err := tx.Get(Key(s.db, id), &a); err != nil || !ok || a.Committed != 0 {
				return err // deleted meanwhile, or stamped by an earlier try
			}
			a.Committed = now
			return tx.Put(Key(s.db, id), &a)
		})
		if err == nil {
			return
		}
	}
}

func (s *Service) enqueueFanout(ctx context.Context, id string, chunk int, before int64) error {
	return FanoutJob.Enqueue(ctx, s.queue, FanoutTask{ActivityID: id, Chunk: chunk, Before: before}, 0)
}

// count adds a post a, if counted, to its author's statuses and to its
// parent's replies, blind (server-side increments, which read nothing).
func (p *posting) count(tx *store.Tx, a *Activity) error {
	if !counted(a) {
		return nil
	}
	if err := accounts.CountPost(tx, p.author, 1, a.PostedTime*1000); err != nil {
		return err
	}
	if a.InReplyTo == "" {
		return nil
	}
	return tx.Increment(Key(tx.DB(), a.InReplyTo), map[string]int64{"repliesCount": 1})
}
