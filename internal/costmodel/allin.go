package costmodel

import "math"

// The bill beside Datastore's: App Engine's instance hours and egress,
// Cloud Storage's pictures, and what the instances' page cache saves of
// the pages' reads.

// Serving is what a request costs an instance, as feedbench's
// BenchmarkPageCPU measured it: CPU milliseconds of the Go process on the
// machine the suite runs on (MachineGHz a core), and the bytes of the
// answers.
type Serving struct {
	Source     string
	MachineGHz float64
	// Procs is the Go scheduler's processors the figures were measured
	// with (GOMAXPROCS: app.yaml's).
	Procs int
	// PageCPU is a page of 20 (a Mastodon home timeline), PollCPU an
	// unread count, WriteCPU a like or unlike with the job it enqueues,
	// PictureCPU a thumbnail by its link: milliseconds each.
	PageCPU, PollCPU, WriteCPU, PictureCPU float64
	// ProcessCPU is making a phone photo safe (a 12-megapixel JPEG
	// decoded, turned upright, encoded again, with its thumbnail), an
	// upload's or a picture's from elsewhere: media's BenchmarkProcess.
	// SignCPU and VerifyCPU are signing a delivery to another server and
	// checking one from it (RSA-2048): federation's BenchmarkSign and
	// BenchmarkVerify. Milliseconds each.
	ProcessCPU, SignCPU, VerifyCPU float64
	// SharedAloneCPU is what a page costs more with the shared tier in
	// place of the instance's cache: its activities and authors read
	// from Redis and loaded into their structs anew (feedbench's
	// BenchmarkPageCPUSharedAlone less BenchmarkPageCPU, the home page).
	SharedAloneCPU float64
	// PageBytes is a Mastodon timeline page of 20, as JSON.
	PageBytes float64
	// CacheEntryBytes is the heap an entity the page cache keeps takes.
	CacheEntryBytes float64
}

// Measured are the figures of
//
//	go test ./cmd/feedbench -run '^$' -bench PageCPU -benchtime 1000x -count 3
//
// on the 2-core machine the suite runs on (the median of the 3 runs),
// with the Go scheduler's processors app.yaml gives the service
// (GOMAXPROCS 1).
var Measured = Serving{
	Source:     "feedbench's BenchmarkPageCPU on a 2.6 GHz AMD EPYC core",
	MachineGHz: 2.6,
	Procs:      1,
	// A page: the Mastodon home timeline's figure, each page asking for
	// the marks of changes itself (pages share asks only at loads the
	// presets' small instances do not see). A poll: an unread count
	// that reads its count, two Datastore calls, as one that asks for
	// changes makes (measured before counts were kept, with two
	// processors: the bench's count now finds its count kept).
	PageCPU: 1.4, PollCPU: 0.89, WriteCPU: 3.2, PictureCPU: 0.31,
	ProcessCPU: ProcessCPUMeasured, SignCPU: 1.6, VerifyCPU: 0.06, SharedAloneCPU: 1.4,
	PageBytes:       47568,
	CacheEntryBytes: 5961,
}

// Class is an App Engine standard instance class, as the service is
// configured on it.
type Class struct {
	Name string
	// GHz is its CPU's clock, Memory its memory in MB, and F1Hours the
	// F1 instance hours an hour of it is billed as.
	GHz, Memory, F1Hours float64
	// UploadMemory is the UPLOAD_MEMORY set on it, MB; CacheEntries the
	// PAGE_CACHE_ENTRIES at most (0: the workload's).
	UploadMemory, CacheEntries float64
}

// The classes the model chooses from (Classes): F1, as app.yaml names
// it, with the least upload budget (which refuses the largest pictures:
// docs/performance.md, "Uploads and memory") and a smaller page cache;
// F2 with the defaults, which take every picture.
var (
	F1 = Class{Name: "F1", GHz: 0.6, Memory: 384, F1Hours: 1, UploadMemory: F1UploadMemory, CacheEntries: F1CacheEntries}
	F2 = Class{Name: "F2", GHz: 1.2, Memory: 768, F1Hours: 2, UploadMemory: UploadMemory}
	// Classes are tried in this order; the cheapest that holds the
	// instance's memory is taken, the first of equals.
	Classes = []Class{F1, F2}
)

// What app.yaml sets on F1: UPLOAD_MEMORY (media.MinMemory, 176 MiB) and
// PAGE_CACHE_ENTRIES.
const (
	F1UploadMemory = 176 * (1 << 20) / 1e6
	F1CacheEntries = 8000
)

// Serving's assumptions, beside what was measured.
const (
	// TargetUtilization is App Engine's default target_cpu_utilization:
	// the scheduler starts an instance when its CPU is this busy.
	TargetUtilization = 0.6
	// GzipRatio is how much smaller App Engine's front end sends a JSON
	// answer to a client that accepts gzip: a Mastodon home page of
	// everyday posts, measured through the service by cmd/feedbench's
	// TestMastodonPageAsTheModelTakesIt, shrinks 9.7-fold (10 authors;
	// 9.1 with 20), gzip's default level; 8 leaves room for pages of
	// more pictures and links. (It was 4, assumed, before it was
	// measured; the benchmark's pages, one text repeated, shrink
	// 20-fold.)
	GzipRatio = 8
	// HeaderBytes is what an answer sends beside its body, to a client or
	// another server: its status line and header as HTTP/2 sends them
	// (HPACK keeps the names and values a connection sent before), and
	// TLS's framing. An assumption.
	HeaderBytes = 150
	// WordBytes is what each word of a post adds to each delivery of it
	// (a mean word and its space, assumed): the meter's deliveries are
	// of a post of two.
	WordBytes = 6
	// BaseMemory is an instance's heap but the cache and uploads, MB.
	BaseMemory = 100
	// UploadMemory is UPLOAD_MEMORY's default, MB.
	UploadMemory = 320
)

// AllIn is the rest of a month's bill, beside Datastore and Cloud Tasks.
type AllIn struct {
	// HitShare is the share of a home or person's page's activities and
	// authors that the instance's cache holds (see hitShare); PageReads
	// what a home page reads, with it. OwnHitShare is the share of unread
	// counts that find their reader's state kept (see ownHitShare), and
	// CountHitShare of those the count itself (see countHitShare).
	HitShare, PageReads, OwnHitShare, CountHitShare float64
	// ChangeReads are the reads a day of what changes dropped from the
	// instances' caches; Asks the asks a day for the marks of changes,
	// AskReads what they read (a query a shard).
	ChangeReads, Asks, AskReads float64
	// Requests a day, and the CPU-seconds they take on Class; Instances
	// the mean instances up, InstanceHours a day's. Of the CPU-seconds,
	// PictureSeconds are pictures made safe (uploads, and pictures of
	// posts from elsewhere), FederationSeconds deliveries signed and
	// requests from elsewhere checked.
	Requests, CPUSeconds, Instances, InstanceHours float64
	PictureSeconds, FederationSeconds              float64
	// Deliveries are requests to other servers' inboxes a day, Incoming
	// those from other servers; RemotePictures the pictures of their
	// posts fetched and kept a day (media.RemoteCacheFor).
	Deliveries, Incoming, RemotePictures float64
	// Memory is what an instance holds at most, MB: its base, a full
	// cache of CacheEntries and the upload budget.
	Memory, CacheEntries float64
	// EgressGiB a day: pages, pictures, what answers send beside them
	// (their headers, a write's post) and deliveries to other servers;
	// PicturesGiB stored at the month's end; ClassA and ClassB are Cloud
	// Storage operations a day.
	EgressGiB, PicturesGiB, ClassA, ClassB float64
	// Dollars a month: instances, egress, Cloud Storage.
	InstanceDollars, EgressDollars, StorageDollars float64
	// WorkingSet is the activities and authors first pages show at once
	// (see workingSet): what a cache must hold to keep what pages read.
	WorkingSet float64
	// The shared cache tier (Workload.SharedCache): the entities it
	// keeps, the GB provisioned for them, and its dollars a month (with
	// the connector App Engine reaches it by).
	SharedEntries, SharedGB, SharedDollars float64
}

// workingSet is the activities and authors the first pages of homes
// show at once: an ordinary home's first page of 20 reaches back as long
// as its followees take to post 20 (a day when that is longer), and the
// posts of that long, with an author each, are what all first pages
// show between them.
func workingSet(w Workload, postsPerDay float64) float64 {
	perDay := w.Following * w.Active * w.Posts // into one home
	if perDay <= 0 {
		return 0
	}
	reach := math.Min(1, pageSize/perDay)
	posts := postsPerDay * reach
	return posts + math.Min(posts, w.People*w.Active)
}

// hitShare is the share of a page's activities and authors that one of
// instances finds in its cache, kept ttl seconds after each read: an
// ordinary post is read by its author's active followers' home pages
// while it is on their first page, at reads a second spread over the
// instances; a read finds it kept if another read came within the ttl
// before it (reads as a Poisson process). The rate does not depend on
// how long the post stays on the first page: its active followers read
// their homes HomePages times a day whatever it shows.
func hitShare(w Workload, followers, instances, ttl float64) float64 {
	if ttl <= 0 {
		return 0
	}
	perSecond := followers * w.Active * w.HomePages / secondsPerDay / math.Max(1, instances)
	return 1 - math.Exp(-perSecond*ttl)
}

// ownHitShare is the share of an active person's unread counts that find
// their own state kept by one of keepers, kept ttl seconds after each
// read: their pages and counts read it, at their rate a second spread
// over the keepers (reads as a Poisson process, as hitShare; an app's
// counts come in sessions, so more are kept than this says).
func ownHitShare(w Workload, keepers, ttl float64) float64 {
	if ttl <= 0 {
		return 0
	}
	perSecond := (w.HomePages + w.OtherPages + w.NotificationPages + w.UnreadPolls) / secondsPerDay / math.Max(1, keepers)
	return 1 - math.Exp(-perSecond*ttl)
}

// countHitShare is the share of an active person's unread counts that
// find the count itself kept, of own, the share that find their state
// kept: each notification the reader gets drops it, and the next count
// makes it again. A person gets about as many notifications a day as an
// active person's likes, comments and follows make (each tells its
// post's author or the followed); as if they and the counts were spread
// alike over the day, one count a notification misses.
func countHitShare(w Workload, own float64) float64 {
	notes := w.Likes + w.Comments + w.Follows
	return own * math.Max(0, 1-notes/math.Max(w.UnreadPolls, 1))
}

// allIn works out the rest of r's bill, and what the cache saves of its
// Datastore reads (returned: the reads a day, with the cache).
func allIn(w Workload, r *Result, p Prices, s Serving, c Class) (AllIn, float64) {
	var a AllIn
	active := w.People * w.Active
	pages := active * (w.HomePages + w.OtherPages + w.NotificationPages)
	polls := active * w.UnreadPolls
	writes := active*(w.Posts+w.Likes+w.Comments+w.Follows+w.Unfollows) + r.CelebrityPostsPerDay
	pictures := r.PostsPerDay * w.PictureShare
	// Thumbnails: those of the fresh share of each feed page's items
	// (an app keeps what it fetched), and the full image of OpenShare.
	thumbs := active * (w.HomePages + w.OtherPages) * pageSize * w.PictureShare * w.FreshShare
	opened := thumbs * w.OpenShare
	// Federation: a delivery job a post and inbox, each signed; each
	// post and follow from elsewhere checked; the pictures of those posts
	// fetched and made safe as uploads are.
	a.Deliveries = r.PostsPerDay * w.FedInboxes
	a.Incoming = active * (w.FedPosts + w.FedFollows)
	a.RemotePictures = active * w.FedPosts * w.PictureShare
	// A post's deliveries are one task's run for each BatchInboxes of
	// them, but for a post to one inbox, whose delivery is its own.
	runs := a.Deliveries
	if w.FedInboxes > 1 {
		runs = r.PostsPerDay * math.Ceil(w.FedInboxes/BatchInboxes)
	}
	a.Requests = pages + polls + writes + thumbs + opened + runs + a.Incoming + a.RemotePictures
	scale := s.MachineGHz / c.GHz / 1000
	a.PictureSeconds = (pictures + a.RemotePictures) * s.ProcessCPU * scale
	a.FederationSeconds = (a.Deliveries*s.SignCPU + a.Incoming*s.VerifyCPU) * scale
	pageCPU := s.PageCPU
	if w.sharedAlone() {
		pageCPU += s.SharedAloneCPU // its entities read from the tier and loaded anew
	}
	cpuMS := pages*pageCPU + polls*s.PollCPU + writes*s.WriteCPU + (thumbs+opened)*s.PictureCPU
	a.CPUSeconds = cpuMS*scale + a.PictureSeconds + a.FederationSeconds
	// Instances follow the load at the target utilization; one is up all
	// day as long as requests come every few minutes.
	a.Instances = math.Max(1, a.CPUSeconds/secondsPerDay/TargetUtilization)
	a.InstanceHours = 24 * a.Instances
	a.InstanceDollars = math.Max(0, a.InstanceHours*c.F1Hours-p.FreeF1Hours) * p.PerF1Hour * daysPerMonth
	entries := w.CacheEntries
	if c.CacheEntries > 0 {
		entries = math.Min(entries, c.CacheEntries)
	}
	if w.sharedAlone() {
		entries = 0 // no instance keeps its own
	}
	a.Memory, a.CacheEntries = BaseMemory+entries*s.CacheEntryBytes/1e6+c.UploadMemory, entries

	// The cache: a page reads its query and the reader's state, and of
	// its activities and authors those no read kept in the TTL. A
	// notifications page's notifications are its reader's alone, read
	// cold; their activities (the reader's) and actors are others' pages'
	// too.
	// With a tier the instances share, a read anywhere keeps what it read
	// for every instance: the tier's hits are those of one cache.
	keepers := a.Instances
	if w.SharedCache > 0 {
		keepers = 1
	}
	a.HitShare = hitShare(w, r.OrdinaryFollowers, keepers, w.CacheTTL)
	a.OwnHitShare = ownHitShare(w, keepers, w.CacheTTL)
	// An instance's cache holds CacheEntries at most: past them, it keeps
	// that share of what pages read. The tier is provisioned for all.
	a.WorkingSet = workingSet(w, r.PostsPerDay)
	if w.SharedCache == 0 && a.WorkingSet > entries {
		a.HitShare *= entries / a.WorkingSet
		a.OwnHitShare *= entries / a.WorkingSet
	}
	// Each instance asks for the marks of changes at most once in
	// CacheSync, when a page comes: with pages at a rate λ, once in
	// CacheSync + 1/λ seconds on average. An unread count takes an ask
	// begun up to CacheSync + UnreadLag before it, and asks itself when
	// there was none (as if the asks came as a Poisson process at their
	// rate). An ask reads a query a shard; one that finds more than
	// SyncLimit marks in a shard forgets everything, as every ask of a
	// day at that rate would.
	r.Shards = w.MarkShards
	pageAsks := 0.0
	if w.CacheTTL > 0 && !w.sharedAlone() {
		lambda := pages / secondsPerDay / a.Instances
		if r.Shards == 0 {
			r.Shards = MarkShards(r.PeakMarks, lambda*w.Peak, w.CacheSync)
		}
		gap := w.CacheSync + 1/lambda
		pageAsks = a.Instances * secondsPerDay / gap
		a.Asks = pageAsks + polls*math.Exp(-(w.CacheSync+UnreadLag)/gap)
		a.AskReads = a.Asks * r.Shards
		if r.PeakMarks/w.Peak*(gap+SyncMargin)/r.Shards >= SyncLimit && w.SharedCache == 0 {
			a.HitShare, a.OwnHitShare = 0, 0 // the instance forgets; the tier would keep
		}
	}
	r.Shards = math.Max(r.Shards, 1)
	// A warm page's bill is its query and an ask: the ask is counted
	// apart, once an ask. A warm home
	// page makes no query while the range of its reader's home is kept,
	// until a write that reaches it, or one that names no reader (a
	// delete, an unfollow, a mention's copy), drops it; how long one
	// lasts is not modelled: every warm home page is counted with its
	// query, as one whose range was dropped.
	saved := func(op string, own float64) float64 {
		warm := Metered[op+", warm"].Reads - 1
		if op == "home page" {
			warm = Metered["home page, warm, its range dropped"].Reads - Metered["home page, warm"].Reads
		}
		return (Metered[op].Reads - warm - own) * a.HitShare
	}
	homePages := active * (w.HomePages + w.OtherPages + w.NotificationPages)
	a.PageReads = Metered["home page"].Reads - saved("home page", 0) + pageAsks*math.Max(r.Shards, 1)/math.Max(homePages, 1)
	if w.CelebrityThreshold > 0 {
		a.PageReads += Metered["home page, following a celebrity, warm"].Reads - Metered["home page, warm"].Reads
	}
	// An unread count that finds its count kept reads nothing (but its
	// ask, counted apart); one that finds its reader's state kept, the
	// count dropped by a notification since, reads the count's query.
	a.CountHitShare = countHitShare(w, a.OwnHitShare)
	pollCold := Metered["unread count"].Reads
	pollSaved := (pollCold-(Metered["unread count, a notification since"].Reads-1))*(a.OwnHitShare-a.CountHitShare) +
		(pollCold-(Metered["unread count, warm"].Reads-1))*a.CountHitShare
	// A warm notifications page finds its unread count kept as often as
	// a count that finds its reader's state kept does; else it counts.
	countKept := a.CountHitShare / math.Max(a.OwnHitShare, 1e-9)
	notesSaved := saved("notifications page", pageSize) - (1-countKept)*a.HitShare
	reads := r.Day.Reads - active*(w.HomePages*saved("home page", 0)+w.OtherPages*saved("@self by another", 0)+
		w.NotificationPages*notesSaved+w.UnreadPolls*pollSaved) + a.AskReads
	// A change drops what it changes from every instance that keeps it:
	// each write's entity and its actor's card or state, read again once
	// on each instance that held it.
	a.ChangeReads = writes * ChangedPerWrite * keepers * a.HitShare
	reads += a.ChangeReads
	if w.SharedCache > 0 && w.CacheTTL > 0 {
		// What the tier keeps: each miss of a page's activities and
		// authors, for the TTL; provisioned with a quarter to spare.
		a.SharedEntries = a.WorkingSet
		a.SharedGB = math.Max(p.MinRedisGB, math.Ceil(a.SharedEntries*SharedEntryBytes*1.25/1e9))
		a.SharedDollars = a.SharedGB*p.PerRedisGBHour*24*daysPerMonth + p.VPCConnectorMonth
	}

	gib := float64(1 << 30)
	thumbBytes := w.WebPShare*w.ThumbWebPBytes + (1-w.WebPShare)*w.ThumbBytes
	// Beside pages and pictures: every answer's header (to apps and to
	// other servers), a write's answer, its post as a page shows one,
	// and every delivery (the meter's, and the words of a post past the
	// meter's two).
	answers := (pages+polls+writes+thumbs+opened+a.Incoming)*HeaderBytes + writes*s.PageBytes/pageSize/GzipRatio
	sent := r.Federation.Sent + a.Deliveries*w.Words*WordBytes
	a.EgressGiB = (pages*s.PageBytes/GzipRatio + thumbs*thumbBytes + opened*w.ImageBytes + answers + sent) / gib
	a.EgressDollars = math.Max(0, a.EgressGiB-p.FreeEgressGiB) * p.PerEgressGiB * daysPerMonth
	// Pictures: a month's uploads kept, and the pictures of posts from
	// elsewhere for RemoteCacheDays; each written as an image, a
	// thumbnail and a thumbnail in WebP; a fetch job and an uncache job
	// each from elsewhere. An upload is made safe by its job
	// (uploadJobs): its bytes as sent written and read again.
	a.PicturesGiB = (pictures*daysPerMonth + a.RemotePictures*RemoteCacheDays) * (w.ImageBytes + w.ThumbBytes + w.ThumbWebPBytes) / gib
	a.ClassA = 3*(pictures+a.RemotePictures) + pictures
	r.Day.Tasks += 4 * a.RemotePictures
	a.ClassB = thumbs + opened + pictures
	a.StorageDollars = math.Max(0, a.PicturesGiB-p.FreeStorageGiB)*p.PerStorageGiBMonth +
		math.Max(0, a.ClassA*daysPerMonth-p.FreeClassA)/1e4*p.PerClassA +
		math.Max(0, a.ClassB*daysPerMonth-p.FreeClassB)/1e4*p.PerClassB
	return a, reads
}

// UnreadLag is how long before an unread count an ask for changes may
// have begun and serve it, beside PAGE_CACHE_SYNC (notifications', in
// seconds; cmd/feedbench's TestBill checks they agree).
const UnreadLag = 2

// BatchInboxes is how many inboxes one task delivers a post to
// (federation.BatchInboxes; cmd/feedbench's TestBill checks they agree).
const BatchInboxes = 50

// RemoteCacheDays is how long a picture of a post from elsewhere is kept
// after its fetch (media.RemoteCacheFor).
const RemoteCacheDays = 7

// ProcessCPUMeasured is milliseconds to make a 12-megapixel phone photo
// safe, on one processor of the 2-core machine (GOMAXPROCS=1, as
// app.yaml runs the service), the suite's alone, the median of 5:
// media's BenchmarkProcess (441: decoded, turned, its blocks averaged and
// scaled to media.KeptPixels, its thumbnail made and both encoded again;
// a flat picture's thumbnail in WebP among them), and
// BenchmarkWebPThumbnail, a photo's thumbnail of pixels that do not
// compress, in WebP (76): GOMAXPROCS=1 go test ./internal/media -run
// '^$' -bench 'BenchmarkProcess$|BenchmarkWebPThumbnail$' -benchtime 20x
// -count 5. (537 for BenchmarkProcess in the same run of the code that
// kept 3840 × 2160's worth; 397 + 90 with two processors, 320 before
// thumbnails were made in WebP, 561 before the thumbnail was first
// averaged in blocks.)
const ProcessCPUMeasured = 441 + 76

// SharedEntryBytes is what an entity the shared tier keeps takes there:
// its properties, gob-encoded, with Redis's own overhead (an assumption
// of 2 KiB; an activity's properties are about 1 KB).
const SharedEntryBytes = 2048

// ChangedPerWrite is how many kept entities a write changes that pages
// read: what it writes (an activity's count, a notification) and its
// actor's card or state.
const ChangedPerWrite = 2

// pageSize is the activities a page shows.
const pageSize = 20

// cheapestClass works out the rest of r's bill on each of Classes and
// keeps it on the one whose instances cost least and hold their memory
// (F2 should none): it returns the bill and its reads a day.
func cheapestClass(w Workload, r *Result, p Prices) (AllIn, float64) {
	var best AllIn
	var bestReads float64
	var bestResult *Result
	for _, c := range Classes {
		try := *r // allIn adds to the day's tasks and writes: each class from the same
		a, reads := allIn(w, &try, p, Measured, c)
		if a.Memory > c.Memory || bestResult != nil && a.InstanceDollars >= best.InstanceDollars {
			continue
		}
		try.Class = c
		best, bestReads, bestResult = a, reads, &try
	}
	if bestResult == nil {
		r.Class = F2
		return allIn(w, r, p, Measured, F2)
	}
	*r = *bestResult
	return best, bestReads
}
