package costmodel

import (
	"math"
	"strings"
	"testing"
)

// A post's active followers read their homes 864 times a day between them
// per follower: one read a second on one instance, so a TTL of a second
// finds the last read within it 1 - 1/e of the time; two instances halve
// the rate; no TTL, no hits.
func TestHitShare(t *testing.T) {
	w := Workload{Active: 1, HomePages: 864}
	for _, c := range []struct {
		followers, instances, ttl, want float64
	}{
		{100, 1, 1, 1 - math.Exp(-1)},
		{100, 2, 1, 1 - math.Exp(-0.5)},
		{100, 0.5, 1, 1 - math.Exp(-1)}, // never less than one instance
		{100, 1, 0, 0},
		{0, 1, 60, 0},
	} {
		if got := hitShare(w, c.followers, c.instances, c.ttl); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("hitShare(%v followers, %v instances, ttl %v) = %v, want %v", c.followers, c.instances, c.ttl, got, c.want)
		}
	}
}

// A person's own state is read by their own pages and unread counts: 864
// of them a day is one in 100 seconds, on one instance, so a TTL of 100
// seconds finds the last within it 1 - 1/e of the time; two halve it.
func TestOwnHitShare(t *testing.T) {
	w := Workload{HomePages: 400, UnreadPolls: 464}
	for _, c := range []struct{ keepers, ttl, want float64 }{
		{1, 100, 1 - math.Exp(-1)},
		{2, 100, 1 - math.Exp(-0.5)},
		{1, 0, 0},
	} {
		if got := ownHitShare(w, c.keepers, c.ttl); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("ownHitShare(%v keepers, ttl %v) = %v, want %v", c.keepers, c.ttl, got, c.want)
		}
	}
}

// A community small enough to count by hand: 1,000 people, all active,
// each reading home 10 times and polling 10 times a day, liking twice, and
// one post in ten with a picture.
func TestAllInByHand(t *testing.T) {
	w := Workload{People: 1000, Active: 1, Following: 10, Posts: 1, HomePages: 10, UnreadPolls: 10, Likes: 2,
		PictureShare: 0.1, ImageBytes: 1 << 20, ThumbBytes: 1 << 10, ThumbWebPBytes: 1 << 9, WebPShare: 0.5, FreshShare: 0.5, OpenShare: 0.1,
		CacheEntries: 1000}
	r := Model(w, Nam5)
	a := r.AllIn
	thumbs := 1000 * 10 * pageSize * 0.1 * 0.5 // 10,000
	opened := thumbs * 0.1
	if want := 1000*(10+10+1+2) + thumbs + opened; a.Requests != want {
		t.Errorf("requests %v, want %v", a.Requests, want)
	}
	// and each of the 100 pictures a day made safe.
	cpuMS := 1000*10*Measured.PageCPU + 1000*10*Measured.PollCPU + 1000*3*Measured.WriteCPU + (thumbs+opened)*Measured.PictureCPU +
		100*Measured.ProcessCPU
	if want := cpuMS / 1000 * Measured.MachineGHz / F1.GHz; r.Class != F1 || math.Abs(a.CPUSeconds-want) > 1e-6 {
		t.Errorf("CPU-seconds %v on %s, want %v on F1", a.CPUSeconds, r.Class.Name, want)
	}
	// Far below one instance's load: one F1 all day, 24 F1 hours, within
	// the free 28.
	if a.Instances != 1 || a.InstanceHours != 24 || a.InstanceDollars != 0 {
		t.Errorf("instances %v, hours %v, dollars %v", a.Instances, a.InstanceHours, a.InstanceDollars)
	}
	gib := float64(1 << 30)
	// Half the thumbnails in WebP; every answer's header, and the 3,000
	// writes' answers, a post each.
	answers := (1000*(10+10+3)+thumbs+opened)*HeaderBytes + 1000*3*Measured.PageBytes/pageSize/GzipRatio
	egress := (1000*10*Measured.PageBytes/GzipRatio + thumbs*(0.5*(1<<9)+0.5*(1<<10)) + opened*(1<<20) + answers) / gib
	if math.Abs(a.EgressGiB-egress) > 1e-9 || math.Abs(a.EgressDollars-math.Max(0, egress-1)*0.12*30) > 1e-9 {
		t.Errorf("egress %v GiB, $%v; want %v GiB", a.EgressGiB, a.EgressDollars, egress)
	}
	// 100 pictures a day: 3,000 written in a month, each with its
	// thumbnail, that in WebP, and its bytes as sent (12,000 Class A,
	// 7,000 past the free 5,000, and those bytes read again), 2.9 GiB
	// stored (under the free 5).
	if want := 100 * float64(1<<20+1<<10+1<<9) * 30 / gib; math.Abs(a.PicturesGiB-want) > 1e-9 || a.ClassA != 400 || a.ClassB != thumbs+opened+100 {
		t.Errorf("pictures %v GiB (want %v), Class A %v, Class B %v", a.PicturesGiB, want, a.ClassA, a.ClassB)
	}
	classB := math.Max(0, (thumbs+opened+100)*30-50000) / 1e4 * 0.004
	if want := 7000/1e4*0.05 + classB; math.Abs(a.StorageDollars-want) > 1e-9 {
		t.Errorf("Cloud Storage dollars %v, want %v", a.StorageDollars, want)
	}
	if want := r.DollarsMonth + r.TasksDollarsMonth + a.InstanceDollars + a.EgressDollars + a.StorageDollars; math.Abs(r.TotalDollarsMonth-want) > 1e-9 {
		t.Errorf("all in %v, want %v", r.TotalDollarsMonth, want)
	}
	// No cache: every page read cold.
	if a.HitShare != 0 || r.Day.Reads != r.ColdReads || r.DollarsMonth != r.ColdDollarsMonth {
		t.Errorf("with no cache: hits %v, reads %v of %v cold", a.HitShare, r.Day.Reads, r.ColdReads)
	}
	// A cache: each home page reads its warm reads and the rest at the
	// share missed.
	w.CacheTTL = 60
	r = Model(w, Nam5)
	h := r.AllIn.HitShare
	if h <= 0 || h >= 1 {
		t.Fatalf("hit share %v", h)
	}
	// A change drops its entity and its actor's from the one instance
	// that holds them: 3,000 writes a day, read again at the hit share.
	// With no PAGE_CACHE_SYNC every page asks for the marks of changes, a
	// read (one shard): the warm page's ask, counted apart; an unread
	// count asks when no page's ask began within UnreadLag (a page every
	// 8.64 s). An unread count that finds its reader's state kept (their
	// 20 reads a day, a minute's TTL) finds its count kept too but for
	// one count in five (2 notifications a day to 10 counts), which
	// reads its count's query alone.
	asks := 10000 + 10000*math.Exp(-UnreadLag/8.64)
	if r.Shards != 1 || math.Abs(r.AllIn.Asks-asks) > 1e-6 || r.AllIn.AskReads != r.AllIn.Asks {
		t.Errorf("%v shards, %v asks reading %v; want 1 and %v reading as many", r.Shards, r.AllIn.Asks, r.AllIn.AskReads, asks)
	}
	// (both shares scaled alike by what the instance's cache holds)
	own := (1 - math.Exp(-20.0/86400*60)) * h / hitShare(w, r.OrdinaryFollowers, 1, 60)
	if math.Abs(r.AllIn.OwnHitShare-own) > 1e-12 {
		t.Errorf("own hit share %v, want %v", r.AllIn.OwnHitShare, own)
	}
	// A warm home page is counted with its query, as one whose kept
	// range was dropped: its query, beyond the ask.
	query := Metered["home page, warm, its range dropped"].Reads - Metered["home page, warm"].Reads
	missed := Metered["home page"].Reads - (Metered["home page"].Reads-query)*h
	home := missed + 1
	again := 3000 * 2 * h
	if math.Abs(r.AllIn.PageReads-home) > 1e-9 || math.Abs(r.AllIn.ChangeReads-again) > 1e-9 ||
		math.Abs(r.ColdReads-r.Day.Reads-1000*10*(Metered["home page"].Reads-missed)-1000*10*own*(0.8*2+0.2*1)+again+asks) > 1e-6 {
		t.Errorf("home page reads %v (want %v), read again %v (want %v); reads a day %v of %v cold",
			r.AllIn.PageReads, home, r.AllIn.ChangeReads, again, r.Day.Reads, r.ColdReads)
	}
	if r.AllIn.Memory != BaseMemory+1000*Measured.CacheEntryBytes/1e6+F1UploadMemory || r.AllIn.Memory > F1.Memory {
		t.Errorf("memory %v MB", r.AllIn.Memory)
	}
}

// An instance asks for the marks of changes at most once in
// PAGE_CACHE_SYNC: at a page a second, a sync of a second halves the
// asks, and each reads a query a shard.
func TestAsksSharedByTime(t *testing.T) {
	w := Workload{People: 1000, Active: 1, Following: 10, HomePages: 86.4, CacheTTL: 600, CacheEntries: 1000, CacheSync: 1, MarkShards: 3}
	r := Model(w, Nam5)
	if r.AllIn.Instances != 1 || math.Abs(r.AllIn.Asks-86400/2) > 1e-6 || math.Abs(r.AllIn.AskReads-3*86400/2) > 1e-6 {
		t.Errorf("%v instances, %v asks reading %v; want 1, 43,200 and 129,600", r.AllIn.Instances, r.AllIn.Asks, r.AllIn.AskReads)
	}
}

// The marks' shards keep each range under RangeLimit and each ask's
// marks of a shard under SyncLimit.
func TestMarkShards(t *testing.T) {
	for _, c := range []struct{ marks, pages, sync, want float64 }{
		{10, 1, 0.1, 1},
		{499, 1000, 0.1, 2},   // 499 x 2.101 s an ask: over 1,000 marks in one
		{500, 1000, 0, 2},     // the margin alone and a page's wait: 1,000.5
		{4294, 100, 1, 13},    // 4,294 x 3.01 s: 12,925 marks an ask
		{4294, 1000, 0.05, 9}, // the range limit
		{100, 0, 1, 1},        // no pages, no asks
	} {
		if got := MarkShards(c.marks, c.pages, c.sync); got != c.want {
			t.Errorf("MarkShards(%v, %v, %v) = %v, want %v", c.marks, c.pages, c.sync, got, c.want)
		}
	}
}

// With the shared tier, a read on any instance keeps for all: the hit
// share is one cache's however many instances run, a change is read
// again once, and the tier is priced by what it keeps.
func TestSharedTier(t *testing.T) {
	w := Presets[2] // ten million: many instances
	w.SharedCache = 0
	alone := Model(w, Nam5)
	w.SharedCache = 1
	shared := Model(w, Nam5)
	if alone.AllIn.Instances < 2 {
		t.Fatalf("%v instances: the preset no longer tests many", alone.AllIn.Instances)
	}
	if want := hitShare(w, shared.OrdinaryFollowers, 1, w.CacheTTL); shared.AllIn.HitShare != want || alone.AllIn.HitShare >= want {
		t.Errorf("hit share %v with the tier (want %v), %v without", shared.AllIn.HitShare, want, alone.AllIn.HitShare)
	}
	if shared.AllIn.SharedDollars <= Nam5.VPCConnectorMonth || alone.AllIn.SharedDollars != 0 {
		t.Errorf("tier dollars %v with it, %v without", shared.AllIn.SharedDollars, alone.AllIn.SharedDollars)
	}
	if shared.AllIn.PageReads > 5 || shared.TotalDollarsMonth >= alone.TotalDollarsMonth {
		t.Errorf("a page reads %v with the tier; all in $%v against $%v without", shared.AllIn.PageReads, shared.TotalDollarsMonth, alone.TotalDollarsMonth)
	}
}

// An instance's cache holds PAGE_CACHE_ENTRIES at most: a million
// people's first pages show more than that at once, so without the tier
// an instance keeps that share of its hits; the tier is sized for all.
func TestWorkingSetCapsAnInstancesHits(t *testing.T) {
	w := Presets[1]
	ws := workingSet(w, Model(w, Nam5).PostsPerDay)
	// 150 followees posting 0.4 a day fill a first page in 8 hours: a
	// third of the day's 400k posts and an author each.
	if want := 2 * 400_000 / 3.0; math.Abs(ws-want) > 0.01*want {
		t.Errorf("working set %v, want about %v", ws, want)
	}
	w.SharedCache = 0
	alone := Model(w, Nam5)
	base := hitShare(w, alone.OrdinaryFollowers, alone.AllIn.Instances, w.CacheTTL)
	if want := base * F1CacheEntries / ws; alone.Class != F1 || math.Abs(alone.AllIn.HitShare-want) > 1e-9 {
		t.Errorf("hit share %v without the tier, want %v", alone.AllIn.HitShare, want)
	}
	w.SharedCache = 1
	if shared := Model(w, Nam5); shared.AllIn.SharedEntries != ws || shared.AllIn.HitShare <= alone.AllIn.HitShare {
		t.Errorf("the tier keeps %v (want %v) at a hit share of %v", shared.AllIn.SharedEntries, ws, shared.AllIn.HitShare)
	}
}

// Federation's CPU: each delivery signed, each request from elsewhere
// checked; the pictures of posts from elsewhere made safe, kept a week,
// with a fetch job and an uncache job each.
func TestFederationAllIn(t *testing.T) {
	w := Workload{People: 1000, Active: 1, Following: 10, Posts: 1, PictureShare: 0.5, ImageBytes: 1 << 20,
		FedInboxes: 3, FedPosts: 2, FedReach: 1}
	r := Model(w, Nam5)
	a := r.AllIn
	if a.Deliveries != 3000 || a.Incoming != 2000 || a.RemotePictures != 1000 {
		t.Fatalf("deliveries %v, incoming %v, pictures %v; want 3,000, 2,000 and 1,000", a.Deliveries, a.Incoming, a.RemotePictures)
	}
	scale := Measured.MachineGHz / r.Class.GHz / 1000
	if want := (3000*Measured.SignCPU + 2000*Measured.VerifyCPU) * scale; math.Abs(a.FederationSeconds-want) > 1e-9 {
		t.Errorf("federation CPU %v s, want %v", a.FederationSeconds, want)
	}
	if want := (500 + 1000) * Measured.ProcessCPU * scale; math.Abs(a.PictureSeconds-want) > 1e-9 {
		t.Errorf("pictures' CPU %v s, want %v", a.PictureSeconds, want)
	}
	w.FedInboxes, w.FedPosts = 0, 0
	alone := Model(w, Nam5)
	if d := r.Day.Tasks - alone.Day.Tasks - Post(0).minus(Post(0)).Tasks; d < 4*1000 {
		t.Errorf("tasks of federation %v, want at least 4 a picture from elsewhere", d)
	}
	if want := (500*30 + 1000*RemoteCacheDays) * float64(1<<20) / (1 << 30); math.Abs(a.PicturesGiB-want) > 1e-9 {
		t.Errorf("pictures stored %v GiB, want %v", a.PicturesGiB, want)
	}
	// Egress: each delivery as the meter's (1,000 posts to 3 inboxes: a
	// first and two more), and each of the 2,000 answers to other servers'
	// requests a header; the rest as without federation.
	one := Metered["post, to 1 inboxes elsewhere"].Sent
	more := (Metered["post, to 10 inboxes elsewhere"].Sent - one) / 9
	if want := (1000*(one+2*more) + 2000*HeaderBytes) / (1 << 30); math.Abs(a.EgressGiB-alone.AllIn.EgressGiB-want) > 1e-9 || one < 1000 {
		t.Errorf("egress %v GiB, without federation %v: want %v more", a.EgressGiB, alone.AllIn.EgressGiB, want)
	}
}

// With the tier alone no write marks its changes and no instance asks
// for them; each page loads its entities anew, at SharedAloneCPU more.
func TestSharedTierAlone(t *testing.T) {
	w := Presets[1]
	w.LocalCache = 1
	under := Model(w, Nam5)
	w.LocalCache = 0
	alone := Model(w, Nam5)
	marks := under.PeakMarks / w.Peak * secondsPerDay
	if math.Abs(under.Day.Writes-alone.Day.Writes-marks) > 1e-6*marks || alone.AllIn.Asks != 0 || under.AllIn.Asks == 0 {
		t.Errorf("writes %v alone, %v under the instances' caches (marks %v); asks %v and %v",
			alone.Day.Writes, under.Day.Writes, marks, alone.AllIn.Asks, under.AllIn.Asks)
	}
	active := w.People * w.Active
	pages := active * (w.HomePages + w.OtherPages + w.NotificationPages)
	if want := pages * Measured.SharedAloneCPU * Measured.MachineGHz / alone.Class.GHz / 1000; alone.Class != under.Class || math.Abs(alone.AllIn.CPUSeconds-under.AllIn.CPUSeconds-want) > 1e-6*want {
		t.Errorf("CPU-seconds %v alone, %v under; want %v more", alone.AllIn.CPUSeconds, under.AllIn.CPUSeconds, want)
	}
	for _, g := range alone.Ranges {
		if strings.Contains(g.Name, "marks") {
			t.Errorf("a range of marks with none written: %+v", g)
		}
	}
}
