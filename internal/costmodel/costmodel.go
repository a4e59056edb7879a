// Package costmodel turns a workload (people, their follows, what they do
// in a day) into what Firestore in Datastore mode bills for it, and sets
// beside it two other designs on the same workload: fan-out on write into
// Redis sorted sets (Mastodon's home timelines) and pull (one query per
// followee, at read time).
//
// Its per-operation figures are the billing meter's (feedbench -bill on
// the emulator; TestBill in cmd/feedbench checks that they agree), so the
// model is only as right as the workload it is given.
package costmodel

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Op is what one operation is billed: entities read, written and deleted,
// index entries written, bytes stored, Cloud Tasks operations (each task
// created, each attempt run), and the bytes its deliveries sent to other
// servers (Sent: each request as it left, its line, header and body).
type Op struct {
	Reads, Writes, Deletes, IndexEntries, Bytes float64
	Tasks                                       float64
	Sent                                        float64
}

func (o Op) plus(p Op) Op {
	return Op{o.Reads + p.Reads, o.Writes + p.Writes, o.Deletes + p.Deletes, o.IndexEntries + p.IndexEntries, o.Bytes + p.Bytes,
		o.Tasks + p.Tasks, o.Sent + p.Sent}
}

func (o Op) minus(p Op) Op { return o.plus(p.times(-1)) }

func (o Op) times(n float64) Op {
	return Op{o.Reads * n, o.Writes * n, o.Deletes * n, o.IndexEntries * n, o.Bytes * n, o.Tasks * n, o.Sent * n}
}

// Metered are the figures of the billing meter for each operation, named
// as feedbench -bill names them, with every job the operation enqueues.
var Metered = map[string]Op{
	"home page":       {Reads: 42},
	"home page, warm": {Reads: 1},
	// A warm home page queries again once a write dropped the range of
	// its reader's home the instance kept: a post that reaches it (its
	// reader's range alone), or a write that names no reader, such as a
	// delete (every range).
	"home page, warm, a post reached it since": {Reads: 4},
	"home page, warm, its range dropped":       {Reads: 2},
	"@self by another":                         {Reads: 24},
	"@self by another, warm":                   {Reads: 3},
	"@all page":                                {Reads: 45},
	"notifications page":                       {Reads: 43},
	"notifications page, warm":                 {Reads: 2},
	"unread count":                             {Reads: 2},
	"unread count, warm":                       {Reads: 1},
	// A notification since drops the kept count; the state is kept.
	"unread count, a notification since": {Reads: 2},
	"like":                               {Reads: 18, Writes: 7, IndexEntries: 33, Bytes: 5816, Tasks: 2},
	"like, its post's third (no trend bumped)": {Reads: 16, Writes: 6, IndexEntries: 28, Bytes: 5073, Tasks: 2},
	"comment":                    {Reads: 14, Writes: 4, IndexEntries: 24, Bytes: 3607, Tasks: 2},
	"follow, with its rebuild":   {Reads: 49, Writes: 28, IndexEntries: 91, Bytes: 12560, Tasks: 4},
	"unfollow, with its rebuild": {Reads: 17, Writes: 28, Deletes: 1, IndexEntries: 12, Bytes: 2129, Tasks: 2},
	// Federation's, on a deployment that federates: what every post
	// costs there (its job reads whether anyone elsewhere follows its
	// author), a post to one and to ten other servers' inboxes (with
	// what its deliveries sent them), a post from another server, and a
	// follow from one.
	"post, 0 followers, federating":     {Reads: 13, Writes: 4, IndexEntries: 30, Bytes: 4395, Tasks: 2},
	"post, to 1 inboxes elsewhere":      {Reads: 18, Writes: 4, IndexEntries: 33, Bytes: 4839, Tasks: 4, Sent: 1976},
	"post, to 10 inboxes elsewhere":     {Reads: 19, Writes: 4, IndexEntries: 60, Bytes: 8832, Tasks: 4, Sent: 19760},
	"incoming post, 1 followers here":   {Reads: 11, Writes: 5, IndexEntries: 39, Bytes: 5711},
	"incoming post, 100 followers here": {Reads: 11, Writes: 5, IndexEntries: 336, Bytes: 47653},
	"incoming follow":                   {Reads: 29, Writes: 8, IndexEntries: 31, Bytes: 7017, Tasks: 4},
	// What posts carry: a vote in a poll; a post scheduled, and its
	// publication by its job (run directly: its task's run is counted
	// apart); a post whose link gets a card, made by its job or shared.
	"vote in a poll":                        {Reads: 16, Writes: 2, IndexEntries: 2, Bytes: 468},
	"schedule a post":                       {Reads: 3, Writes: 2, Bytes: 311, Tasks: 1},
	"publish a scheduled post, 0 followers": {Reads: 12, Writes: 7, Deletes: 1, IndexEntries: 27, Bytes: 4532},
	"post with a link, its card made":       {Reads: 22, Writes: 10, IndexEntries: 74, Bytes: 11460, Tasks: 4},
	"post with a link, its card shared":     {Reads: 21, Writes: 8, IndexEntries: 74, Bytes: 10814, Tasks: 4},
	// Finding posts: a post's words (its search terms) cost index
	// entries and bytes, what a post of 20 words adds to one of 10 a
	// word; a search reads a query a scope and the page it finds.
	"post of 10 words, found by anyone's search": {Reads: 11, Writes: 4, IndexEntries: 67, Bytes: 8719},
	"post of 20 words, found by anyone's search": {Reads: 11, Writes: 4, IndexEntries: 107, Bytes: 13336},
	"search, one word, 5 found":                  {Reads: 12},
	// What trends: a post of hashtags (its tag and trend jobs), the
	// hour's refresh, and a page of trending posts.
	"post of 3 hashtags, its trend uses":                       {Reads: 31, Writes: 10, IndexEntries: 75, Bytes: 11305, Tasks: 10},
	"the hour's refresh of what trends, 3 hashtags and a post": {Reads: 106, Writes: 3, Bytes: 1925},
	"trending posts, 1 of them":                                {Reads: 4},
	// Celebrities (CELEBRITY_FOLLOWERS set): what every post reads more
	// (whether its author is one), a celebrity's post (copied to no
	// follower), and a follower's home page, whose query of the
	// celebrities they follow no cache keeps.
	"post, 0 followers, celebrities on":      {Reads: 12, Writes: 4, IndexEntries: 30, Bytes: 4395},
	"post by a celebrity, 1 follower":        {Reads: 15, Writes: 6, IndexEntries: 37, Bytes: 5482, Tasks: 2},
	"home page, following a celebrity":       {Reads: 7},
	"home page, following a celebrity, warm": {Reads: 2},
}

// Marks are the marks of changes (store.KindChange) among each
// operation's writes, as metered: one for each commit that writes an
// entity pages keep, or an audience chunk (whose readers' home ranges
// instances keep): a follow's rebuild marks its copies.
var Marks = map[string]float64{
	"post, 0 followers":          1,
	"like":                       1,
	"comment":                    1,
	"follow, with its rebuild":   2,
	"unfollow, with its rebuild": 2,
	// A card copied onto its post marks the post once more.
	"post with a link, its card made":   2,
	"post with a link, its card shared": 2,
}

// MarkIndexEntries are a mark's index entries: its place, in the
// built-in index both ways.
const MarkIndexEntries = 2

// A post to F followers, as metered: a post to none (PostOwnWrites of
// its writes its own, one its first audience chunk), and what each
// follower adds (its id in an audience chunk: three index entries).
var (
	PostAlone   = Op{Reads: 11, Writes: 4, IndexEntries: 30, Bytes: 4395}
	PerFollower = Op{IndexEntries: 3, Bytes: 427.57}
	// PerFanoutChunk is what each audience chunk past the first costs:
	// its fan-out job (a task created and run) reads the follower chunk
	// it copies and the activity, and writes the audience chunk.
	PerFanoutChunk = Op{Reads: 3, Writes: 1, Tasks: 2}
	// PerBellChunk is what each follower chunk past the first costs a
	// celebrity's post: its fan-out job reads the activity and the chunk,
	// to tell those who asked, and copies nothing.
	PerBellChunk = Op{Reads: 2, Tasks: 2}
)

// CelebrityPost returns what a celebrity's post to followers is billed,
// with its jobs, when their posts are merged into homes as they are
// read (CELEBRITY_FOLLOWERS).
func CelebrityPost(followers float64) Op {
	chunks := math.Max(1, math.Ceil((followers+1)/AudienceChunkSize))
	return Metered["post by a celebrity, 1 follower"].plus(PerBellChunk.times(chunks - 1))
}

// hybrid reports whether w's celebrities are past its CELEBRITY_FOLLOWERS.
func (w Workload) hybrid() bool {
	return w.CelebrityThreshold > 0 && w.Celebrities > 0 && w.CelebrityFollowers >= w.CelebrityThreshold
}

// AudienceChunkSize is how many follower ids one audience chunk holds
// (activities.AudienceChunkSize); PublicShards and TrimShards are how
// many ranges @all and the trim places are split in (activities'); the
// meter's test checks that they agree.
const (
	// PostOwnWrites are a post's writes but its audience chunks: the
	// activity, and its author's statuses count, and the mark of its
	// changes for the instances' caches.
	PostOwnWrites = 3

	AudienceChunkSize = 4998
	PublicShards      = 4
	TrimShards        = 16
)

// Post returns what a post to followers is billed, with its jobs.
func Post(followers float64) Op {
	chunks := math.Max(1, math.Ceil((followers+1)/AudienceChunkSize))
	return PostAlone.plus(PerFollower.times(followers)).plus(PerFanoutChunk.times(chunks - 1))
}

// Prices are Firestore in Datastore mode's, in US dollars.
type Prices struct {
	// Location is the database's location (Firestore's name for it), as
	// `gcloud firestore databases create --location` takes it.
	Location                string
	Source                  string
	PerReads, PerWrites     float64 // per 100,000 entities
	PerDeletes              float64 // per 100,000 entities
	PerGiBMonth             float64
	FreeReads, FreeWrites   float64 // per day
	FreeDeletes, FreeStored float64 // per day; GiB
	// Cloud Tasks: dollars per million billable operations, and the
	// operations a month that are free.
	TasksSource                string
	PerMillionTasks, FreeTasks float64
	// App Engine standard: dollars per F1 instance hour (an F2's hour is
	// two), and the F1 hours a day that are free; outgoing traffic per
	// GiB, and the GiB a day that are free.
	AppEngineSource             string
	PerF1Hour, FreeF1Hours      float64
	PerEgressGiB, FreeEgressGiB float64
	// Cloud Storage, Standard in one US region: per GiB-month, and per
	// 10,000 Class A (writes) and Class B (reads) operations; the
	// GiB-months and operations a month that are free.
	StorageSource                            string
	PerStorageGiBMonth, PerClassA, PerClassB float64
	FreeStorageGiB, FreeClassA, FreeClassB   float64
	// Memorystore for Redis, Basic tier: dollars per GB-hour of
	// provisioned capacity, the least capacity provisioned (GB), and a
	// Serverless VPC Access connector's month (its two smallest
	// instances), by which App Engine standard reaches it.
	RedisSource                                   string
	PerRedisGBHour, MinRedisGB, VPCConnectorMonth float64
}

// Nam5 is the price list of the US multi-region nam5, as published on
// Firestore in Datastore mode's pricing page (read 2026-11-24): where an
// App Engine app made in us-central (App Engine's name for us-central1)
// has its database, and what a deployment pays that wants its data to
// outlive the loss of a whole region.
var Nam5 = Prices{
	Location: "nam5",
	Source:   "Firestore in Datastore mode pricing, multi-region nam5 (United States), read 2026-11-24",
	PerReads: 0.06, PerWrites: 0.18, PerDeletes: 0.02, PerGiBMonth: 0.18,
	FreeReads: 50000, FreeWrites: 20000, FreeDeletes: 20000, FreeStored: 1,
	TasksSource:     "Cloud Tasks pricing, read 2026-11-28",
	PerMillionTasks: 0.40, FreeTasks: 1_000_000,
	AppEngineSource: "App Engine pricing, standard environment, us-central1, read 2026-11-28",
	PerF1Hour:       0.05, FreeF1Hours: 28, PerEgressGiB: 0.12, FreeEgressGiB: 1,
	StorageSource:      "Cloud Storage pricing, Standard, us-central1, and its free tier, read 2026-11-28",
	PerStorageGiBMonth: 0.020, PerClassA: 0.05, PerClassB: 0.004,
	FreeStorageGiB: 5, FreeClassA: 5000, FreeClassB: 50000,
	RedisSource: "Memorystore for Redis, Basic tier, 1 to 4 GB, us-central1, and Serverless VPC Access with two e2-micro instances: " +
		"figures assumed, not read from the price pages this time; check them before provisioning",
	PerRedisGBHour: 0.049, MinRedisGB: 1, VPCConnectorMonth: 12.3,
}

// Regional is the price list of a database in one US region, us-east4,
// where docs/deploy.md puts it beside the app: the default. No copy of
// Firestore's price table by location was at hand; its figures are
// estimated, and say so: Iowa's regional operations (a copy of the
// billing catalogue: $0.03, $0.09 and $0.01 per 100,000 reads, writes
// and deletes, half of nam5's) with the tenth more that Belgium's reads
// cost there, for a region outside the first tier. Its storage is taken
// at nam5's price, above Iowa's ($0.15). App Engine and Cloud Storage
// are taken at us-central1's lists, read for that region, and
// Memorystore at the figures assumed for it.
var Regional = regional()

func regional() Prices {
	p := Nam5
	p.Location = "us-east4"
	p.Source = "Firestore in Datastore mode, regional us-east4, estimated: Iowa's regional operations with a tenth more, " +
		"storage at nam5's; check them before provisioning"
	p.PerReads, p.PerWrites, p.PerDeletes = 0.033, 0.099, 0.011
	taken := "; taken for us-east4"
	p.AppEngineSource += taken
	p.StorageSource += taken
	p.RedisSource += taken
	return p
}

// Locations are the price lists the model knows, by the database's
// location.
var Locations = map[string]Prices{Regional.Location: Regional, Nam5.Location: Nam5}

// Workload is what a community does in a day.
type Workload struct {
	Name string
	// People, and the share of them active on a day.
	People, Active float64
	// Following is how many people an ordinary person follows, on
	// average; Celebrities are people followed by CelebrityFollowers
	// each, who post CelebrityPosts a day each. CelebrityThreshold is
	// CELEBRITY_FOLLOWERS (0: off): the followers past which a person's
	// posts are merged into homes as they are read, copied to no one.
	Following, Celebrities, CelebrityFollowers, CelebrityPosts float64
	CelebrityThreshold                                         float64
	// What an active person does in a day.
	Posts, HomePages, OtherPages, NotificationPages, UnreadPolls float64
	Likes, Comments, Follows, Unfollows                          float64
	// PublicShare is the share of posts that are public (in @all).
	PublicShare float64
	// RetentionDays is HOME_RETENTION in days (0: for ever).
	RetentionDays float64
	// Peak is the busiest second's rate over the day's mean.
	Peak float64
	// Pictures: the share of posts that carry one, and the bytes of its
	// image and thumbnail, and of its thumbnail in WebP; of a feed page's
	// items, the share an app has not fetched before (FreshShare: their
	// thumbnails are fetched), and of the thumbnails seen, the share
	// opened whole; of the thumbnails fetched, the share sent in WebP
	// (WebPShare: the client's Accept header takes it).
	PictureShare, ImageBytes, ThumbBytes, FreshShare, OpenShare float64
	ThumbWebPBytes, WebPShare                                   float64
	// The page cache: PAGE_CACHE_TTL in seconds, PAGE_CACHE_ENTRIES;
	// PAGE_CACHE_SYNC in seconds (how long an instance's ask for the
	// marks of changes serves its pages), and PAGE_CACHE_SHARDS (0: as
	// many as MarkShards says the workload needs).
	CacheTTL, CacheEntries, CacheSync, MarkShards float64
	// SharedCache is 1 with a cache tier the instances share
	// (PAGE_CACHE_REDIS: Memorystore) under their own, 0 without;
	// LocalCache 0 with it keeps nothing on the instances and writes no
	// marks of changes (PAGE_CACHE_LOCAL=off).
	SharedCache, LocalCache float64
	// Federation (none when all are 0): FedInboxes is the mean count of
	// other servers' inboxes a post goes to (its author's followers
	// there, a server's shared inbox once); FedPosts the posts of other
	// servers taken a day, for each active person here, each reaching
	// FedReach people here; FedFollows the follows from other servers a
	// day, for each active person.
	FedInboxes, FedPosts, FedReach, FedFollows float64
	// What posts carry: Votes an active person casts a day; the share of
	// posts with a link (LinkShare), and of those the share whose card
	// another post made already that day (CardShared); the share of
	// posts scheduled ahead (ScheduledShare). Finding them: the words of
	// a post past those of the meter's (Words: each a search term), and
	// the searches an active person makes a day (Searches). What trends:
	// the share of posts with hashtags (TagShare, 3 each), and the trends
	// pages an active person reads a day (TrendPages), and the refreshes
	// of what trends a day (TrendRefreshes: cron.yaml's, hourly).
	Votes, LinkShare, CardShared, ScheduledShare, Words, Searches float64
	TagShare, TrendPages, TrendRefreshes                          float64
}

// What a phone's photo takes, made safe, measured by cmd/picturesizes on
// 13 photographs (docs/performance.md, "Pictures"): the picture, a
// 12-megapixel photo kept at media.KeptPixels (1920 × 1080's worth) at
// 90,744 bytes a megapixel (JPEG, quality 85); its thumbnail (JPEG); its
// thumbnail in WebP.
const (
	PhotoBytes     = 1920 * 1080 * 90_744 / 1_000_000
	ThumbBytes     = 16_821
	ThumbWebPBytes = 8_976
)

// defaults sets what every preset assumes of pictures, and the service's
// defaults for the page cache (cmd/costmodel's test holds them to the
// service's).
func (w Workload) defaults() Workload {
	w.PictureShare, w.FreshShare, w.OpenShare = 0.2, 0.25, 0.05
	w.ImageBytes, w.ThumbBytes, w.ThumbWebPBytes, w.WebPShare = PhotoBytes, ThumbBytes, ThumbWebPBytes, 0.9
	w.CacheTTL, w.CacheEntries, w.CacheSync, w.LocalCache = 1800, 20000, 0.1, 1
	w.Votes, w.LinkShare, w.CardShared, w.ScheduledShare = 1, 0.2, 0.5, 0.02
	w.Words, w.Searches = 30, 2
	w.TagShare, w.TrendPages, w.TrendRefreshes = 0.2, 1, 24
	return w
}

// Presets are the three communities the README models.
var Presets = []Workload{
	Workload{Name: "community", People: 10_000, Active: 0.3, Following: 50,
		Posts: 2, HomePages: 20, OtherPages: 10, NotificationPages: 3, UnreadPolls: 40,
		Likes: 10, Comments: 1, Follows: 0.2, Unfollows: 0.05, PublicShare: 0.8, RetentionDays: 30, Peak: 5,
		FedInboxes: 10, FedPosts: 5, FedReach: 3, FedFollows: 0.05}.defaults(),
	Workload{Name: "million", People: 1_000_000, Active: 0.2, Following: 150,
		Celebrities: 100, CelebrityFollowers: 100_000, CelebrityPosts: 5, CelebrityThreshold: 10_000,
		Posts: 2, HomePages: 20, OtherPages: 10, NotificationPages: 3, UnreadPolls: 40,
		Likes: 10, Comments: 1, Follows: 0.2, Unfollows: 0.05, PublicShare: 0.8, RetentionDays: 30, Peak: 5,
		FedInboxes: 20, FedPosts: 2, FedReach: 10, FedFollows: 0.05}.defaults().shared(),
	Workload{Name: "ten million", People: 10_000_000, Active: 0.2, Following: 200,
		Celebrities: 1_000, CelebrityFollowers: 1_000_000, CelebrityPosts: 5, CelebrityThreshold: 10_000,
		Posts: 2, HomePages: 20, OtherPages: 10, NotificationPages: 3, UnreadPolls: 40,
		Likes: 10, Comments: 1, Follows: 0.2, Unfollows: 0.05, PublicShare: 0.8, RetentionDays: 30, Peak: 5}.defaults().
		syncEvery(1).shared(),
}

// syncEvery sets PAGE_CACHE_SYNC: a busy deployment's instances ask for
// the marks of changes once a second, not ten times.
func (w Workload) syncEvery(seconds float64) Workload {
	w.CacheSync = seconds
	return w
}

// shared puts the shared cache tier in place of the instances' caches:
// past an instance's entries, or with many instances, each keeps too
// little of what pages read, and the marks of changes cost more in
// writes than keeping on the instance saves in CPU.
func (w Workload) shared() Workload {
	w.SharedCache, w.LocalCache = 1, 0
	return w
}

// sharedAlone reports whether w keeps its pages' entities in the shared
// tier alone, marking no changes.
func (w Workload) sharedAlone() bool { return w.SharedCache > 0 && w.LocalCache == 0 && w.CacheTTL > 0 }

// Counts are a design's figures for one day.
type Counts struct {
	Reads, Writes, Deletes, IndexEntries float64
	// Tasks are Cloud Tasks' billable operations.
	Tasks float64
	// StoredBytes is what the day adds to storage for good; HeldBytes
	// what the retention window holds once full.
	StoredBytes, HeldBytes float64
}

// Result is the model of one workload.
type Result struct {
	Workload Workload
	Day      Counts
	// Federation is what other servers add to the day (in Day already),
	// Carried what the posts' polls, links and schedules add (carried).
	Federation, Carried Op
	// OrdinaryFollowers is the mean follower count of an ordinary
	// person: the follows left once the celebrities have theirs.
	OrdinaryFollowers float64
	// PostsPerDay, of which CelebrityPostsPerDay by celebrities.
	PostsPerDay, CelebrityPostsPerDay float64
	// PeakPosts is posts a second at the peak; Ranges the index ranges
	// that grow at one end and the writes a second each takes at the
	// peak, the busiest first; HottestRange and HottestName the first's.
	PeakPosts, HottestRange float64
	HottestName             string
	Ranges                  []Range
	// PeakMarks are the marks of changes a second at the peak, and
	// Shards the ranges they are spread over.
	PeakMarks, Shards float64
	// DollarsMonth is a month's Datastore bill at the Prices: 30 days of
	// reads, writes and deletes, and the storage at the month's end, the
	// page cache's hits read from memory (ColdDollarsMonth without a
	// cache: every page read cold, and ColdReads a day's reads then);
	// TasksDollarsMonth Cloud Tasks'.
	DollarsMonth, ColdDollarsMonth, TasksDollarsMonth float64
	ColdReads                                         float64
	// AllIn is the rest of the bill, on instances of Class (the cheapest
	// that holds an instance's memory); TotalDollarsMonth all of it.
	AllIn             AllIn
	Class             Class
	TotalDollarsMonth float64
	// Homes compares the designs on the home feed: this one, fan-out on
	// write into Redis, and pull.
	Homes [3]Home
}

// Range is an index range whose values grow at one end (a time, a
// sequence), and the writes a second it takes at the peak.
type Range struct {
	Name      string
	PerSecond float64
}

// RangeLimit is about what Firestore takes into one range that grows at
// one end, in writes a second; SyncLimit the most marks of changes one
// ask reads of a shard before its instance forgets everything
// (store.syncLimit), and SyncMargin how far back each ask reads again
// (store.SyncMargin), in seconds.
const (
	RangeLimit = 500
	SyncLimit  = 1000
	SyncMargin = 2
)

// MarkShards is how many ranges the marks of changes need at a peak of
// marks a second, when each instance takes pages a second at the peak
// and asks at most once in sync seconds: no range past RangeLimit, and
// no ask reading SyncLimit marks of one shard (an ask reads those of the
// time since the last, at least sync plus a page's wait, and the margin
// again).
func MarkShards(marks, pages, sync float64) float64 {
	perAsk := marks * (sync + 1/math.Max(pages, 1e-9) + SyncMargin)
	if math.IsInf(perAsk, 0) || pages <= 0 {
		perAsk = 0
	}
	return math.Max(1, math.Max(math.Ceil(marks/RangeLimit), math.Ceil(perAsk/SyncLimit)))
}

// Home is what reading home pages and delivering posts to them cost a
// day under one design; the rest of the workload (likes, comments,
// follows, other pages) is the same under all three.
type Home struct {
	Design                 string
	Reads, Writes, Deletes float64
	// Held is what the database holds for the homes (with no retention,
	// a year of audience copies); Memory what Redis does (fan-out on
	// write).
	Held, Memory float64
	// RedisOps are Redis commands a day; PeakThreads how many Redis
	// command threads (instances, or shards) the peak's deliveries keep
	// busy, at the measured rate.
	RedisOps, PeakThreads float64
	// DollarsMonth is the database's part of a month, at the Prices.
	DollarsMonth float64
}

// Redis home timelines, as measured by costmodel -measure-redis (Redis
// 7.0.15, Debian's, on the 2-core machine the suite runs on): the bytes
// per entry of 800-entry sorted sets of 19-digit ids scored by
// themselves, and the deliveries (an add and a trim) one pipelined
// connection, and so Redis's one command thread, runs a second.
const (
	HomeSize                 = 800
	RedisBytesPerItem        = 128.7
	RedisDeliveriesPerSecond = 304_000
)

// secondsPerDay and daysPerMonth turn days into seconds and months.
const (
	secondsPerDay = 86400
	daysPerMonth  = 30
)

// federated is what federation adds to a day (Workload.FedInboxes and
// the rest), from the meter's rows: what federating adds to each post
// (its job's query), the first inbox a post goes to and each one more,
// each post of another server's and the audience copies of the people
// here it reaches past the first, and each follow from another server.
func federated(w Workload, active, posts float64) Op {
	if w.FedInboxes == 0 && w.FedPosts == 0 && w.FedFollows == 0 {
		return Op{}
	}
	every := Metered["post, 0 followers, federating"].minus(Post(0))
	first := Metered["post, to 1 inboxes elsewhere"].minus(Metered["post, 0 followers, federating"])
	more := Metered["post, to 10 inboxes elsewhere"].minus(Metered["post, to 1 inboxes elsewhere"]).times(1.0 / 9)
	out := every
	if w.FedInboxes >= 1 {
		out = out.plus(first).plus(more.times(w.FedInboxes - 1))
	}
	in := Metered["incoming post, 1 followers here"].plus(PerFollower.times(math.Max(0, w.FedReach-1)))
	return out.times(posts).plus(in.times(active * w.FedPosts)).plus(Metered["incoming follow"].times(active * w.FedFollows))
}

// BumpShare is the share of likes that bump their post's trend candidate
// when a post gets perPost likes: the first, then one at each doubling
// (trends.Sampled), so of 5 likes the 1st, 2nd and 4th.
func BumpShare(perPost float64) float64 {
	if perPost <= 1 {
		return 1
	}
	return (math.Floor(math.Log2(perPost)) + 1) / perPost
}

// PerWord is what each word of a post (a search term) adds to it, as
// metered: a post of 20 words against one of 10.
func PerWord() Op {
	return Metered["post of 20 words, found by anyone's search"].minus(Metered["post of 10 words, found by anyone's search"]).times(1.0 / 10)
}

// carried is what the posts' polls, links and schedules add to a day:
// the votes; for each post with a link, what its card job adds to the
// post (a fetch and a card made, or a card copied); for each post
// scheduled, its scheduling, what its publication adds to a post, and
// its task's run. And finding posts: each post's words, and the
// searches; what trends: each post's hashtags (their tag and trend
// jobs), the trends pages, and the hour's refresh.
func carried(w Workload, active, posts float64) Op {
	plain := Post(0)
	card := Metered["post with a link, its card made"].minus(plain).times(1 - w.CardShared).
		plus(Metered["post with a link, its card shared"].minus(plain).times(w.CardShared))
	schedule := Metered["schedule a post"].plus(Metered["publish a scheduled post, 0 followers"].minus(plain)).plus(Op{Tasks: 1})
	return Metered["vote in a poll"].times(active * w.Votes).
		plus(card.times(posts * w.LinkShare)).
		plus(schedule.times(posts * w.ScheduledShare)).
		plus(PerWord().times(posts * w.Words)).
		plus(Metered["search, one word, 5 found"].times(active * w.Searches)).
		plus(Metered["post of 3 hashtags, its trend uses"].minus(plain).times(posts * w.TagShare)).
		plus(Metered["trending posts, 1 of them"].times(active * w.TrendPages)).
		plus(Metered["the hour's refresh of what trends, 3 hashtags and a post"].times(w.TrendRefreshes))
}

// Model computes the day of a workload under each design.
func Model(w Workload, p Prices) Result {
	r := Result{Workload: w}
	active := w.People * w.Active
	ordinary := w.People - w.Celebrities
	// Every person follows Following people; the celebrities' followers
	// are among those follows.
	r.OrdinaryFollowers = math.Max(0, (w.People*w.Following-w.Celebrities*w.CelebrityFollowers)/math.Max(1, ordinary))
	ordinaryPosts := math.Max(0, active-w.Celebrities) * w.Posts
	r.CelebrityPostsPerDay = w.Celebrities * w.CelebrityPosts
	r.PostsPerDay = ordinaryPosts + r.CelebrityPostsPerDay

	post := Post(r.OrdinaryFollowers).times(ordinaryPosts).plus(Post(w.CelebrityFollowers).times(r.CelebrityPostsPerDay))
	// Copied are the celebrities' copies of their followers' ids: none
	// when their posts are merged as homes are read.
	copied := w.CelebrityFollowers
	var celebrityPage Op // what a home page reads more with celebrities
	if w.CelebrityThreshold > 0 {
		// Every post reads whether its author is a celebrity; a
		// follower's home page queries the celebrities they follow (their
		// newest posts are read through the cache, by all their
		// followers alike).
		ordinary := Post(r.OrdinaryFollowers).plus(Metered["post, 0 followers, celebrities on"].minus(PostAlone))
		celebrity := ordinary.plus(Post(w.CelebrityFollowers)).minus(Post(r.OrdinaryFollowers))
		if w.hybrid() {
			celebrity, copied = CelebrityPost(w.CelebrityFollowers), 0
		}
		post = ordinary.times(ordinaryPosts).plus(celebrity.times(r.CelebrityPostsPerDay))
		celebrityPage = Op{Reads: Metered["home page, following a celebrity, warm"].Reads - Metered["home page, warm"].Reads}
	}
	pages := Metered["home page"].plus(celebrityPage).times(active * w.HomePages).
		plus(Metered["@self by another"].times(active * w.OtherPages)).
		plus(Metered["notifications page"].times(active * w.NotificationPages)).
		plus(Metered["unread count"].times(active * w.UnreadPolls))
	likes := active * w.Likes
	bumped := BumpShare(likes / math.Max(1, r.PostsPerDay))
	acts := Metered["like"].times(likes * bumped).plus(Metered["like, its post's third (no trend bumped)"].times(likes * (1 - bumped))).
		plus(Metered["comment"].times(active * w.Comments)).
		plus(Metered["follow, with its rebuild"].times(active * w.Follows)).
		plus(Metered["unfollow, with its rebuild"].times(active * w.Unfollows))
	r.Federation = federated(w, active, r.PostsPerDay)
	r.Carried = carried(w, active, r.PostsPerDay)
	day := post.plus(pages).plus(acts).plus(r.Federation).plus(r.Carried)
	// A delivery is one follower's copy of one post; chunks are the
	// audience chunks the day's posts write.
	deliveries := ordinaryPosts*r.OrdinaryFollowers + r.CelebrityPostsPerDay*w.CelebrityFollowers
	copies := ordinaryPosts*r.OrdinaryFollowers + r.CelebrityPostsPerDay*copied
	chunks := post.Writes - PostOwnWrites*r.PostsPerDay
	if w.hybrid() {
		chunks -= r.CelebrityPostsPerDay // their newest posts, kept: no chunk
	}
	r.Day = Counts{Reads: day.Reads, Writes: day.Writes, Deletes: day.Deletes, IndexEntries: day.IndexEntries, Tasks: day.Tasks}
	// What the audience copies hold is kept for the retention (then the
	// trim deletes a chunk per chunk written); everything else for good.
	audience := PerFollower.Bytes * copies
	r.Day.StoredBytes = day.Bytes - audience
	if w.RetentionDays > 0 {
		r.Day.HeldBytes = audience * w.RetentionDays
		r.Day.Deletes += chunks // trimmed: as many as written
	} else {
		r.Day.StoredBytes = day.Bytes
	}

	// The ranges that grow at one end: a shard of @all takes its share
	// of the public posts, a shard of the trim places its share of the
	// audience chunks, a shard of the marks of changes its share of
	// them (its time); follows and pictures are indexed by their time,
	// comments by their seq; a word of search or a hashtag takes the
	// posts that carry it, at most every post; every other range is one
	// person's, post's, tag's or group's (a like's places are its
	// post's and its liker's).
	perSecond := w.Peak / secondsPerDay
	r.PeakPosts = r.PostsPerDay * perSecond
	cardMarks := Marks["post with a link, its card made"] - Marks["post, 0 followers"]
	r.PeakMarks = (r.PostsPerDay*(Marks["post, 0 followers"]+w.LinkShare*cardMarks) + active*(w.Likes*Marks["like"]+w.Comments*Marks["comment"]+
		w.Follows*Marks["follow, with its rebuild"]+w.Unfollows*Marks["unfollow, with its rebuild"])) * perSecond
	if w.sharedAlone() {
		// No write marks its changes: the meter's figures, made with the
		// instance's cache, count them.
		marks := r.PeakMarks / w.Peak * secondsPerDay
		r.Day.Writes -= marks
		r.Day.IndexEntries -= MarkIndexEntries * marks
	}
	r.Ranges = []Range{
		{fmt.Sprintf("a shard of @all (1 of %d)", PublicShards), r.PeakPosts * w.PublicShare / PublicShards},
		{fmt.Sprintf("a shard of the audience trim (1 of %d)", TrimShards), chunks * perSecond / TrimShards},
		{"a word or hashtag every post carries (at most)", r.PeakPosts},
		{"comments, by their seq", active * w.Comments * perSecond},
		{"follows, by their time", (active*w.Follows + active*w.FedFollows) * perSecond},
		{"pictures, by their time", r.PostsPerDay * w.PictureShare * perSecond},
	}
	month := func(perDay, free, price float64) float64 {
		return math.Max(0, perDay-free) * daysPerMonth / 100000 * price
	}
	storedGiB := (r.Day.StoredBytes*daysPerMonth + r.Day.HeldBytes) / (1 << 30)
	datastore := func(reads float64) float64 {
		return month(reads, p.FreeReads, p.PerReads) + month(r.Day.Writes, p.FreeWrites, p.PerWrites) +
			month(r.Day.Deletes, p.FreeDeletes, p.PerDeletes) + math.Max(0, storedGiB-p.FreeStored)*p.PerGiBMonth
	}
	// Each upload is made safe by its job (apps upload by Mastodon's
	// version 2): the task created and run, the item read, then read and
	// changed in the job's transaction.
	uploads := r.PostsPerDay * w.PictureShare
	r.Day.Reads += 2 * uploads
	r.Day.Writes += uploads
	r.Day.Tasks += 2 * uploads
	r.ColdReads = r.Day.Reads
	r.ColdDollarsMonth = datastore(r.ColdReads)
	r.AllIn, r.Day.Reads = cheapestClass(w, &r, p)
	if !w.sharedAlone() {
		r.Ranges = append(r.Ranges, Range{fmt.Sprintf("a shard of the marks of changes (1 of %.0f)", r.Shards), r.PeakMarks / r.Shards})
	}
	slices.SortStableFunc(r.Ranges, func(a, b Range) int { return cmp.Compare(b.PerSecond, a.PerSecond) })
	r.HottestRange, r.HottestName = r.Ranges[0].PerSecond, r.Ranges[0].Name
	r.DollarsMonth = datastore(r.Day.Reads)
	r.TasksDollarsMonth = math.Max(0, r.Day.Tasks*daysPerMonth-p.FreeTasks) / 1e6 * p.PerMillionTasks
	r.TotalDollarsMonth = r.DollarsMonth + r.TasksDollarsMonth + r.AllIn.InstanceDollars + r.AllIn.EgressDollars + r.AllIn.StorageDollars +
		r.AllIn.SharedDollars

	// The home feed under each design. Here: the home pages, and the
	// posts with their audience copies, held for the retention (or a
	// year, without one).
	homePages := active * w.HomePages
	held := audience * w.RetentionDays
	if w.RetentionDays == 0 {
		held = audience * 365
	}
	// Every design reads what a post reads of its author and writes the
	// activity; here a post writes its audience chunks too, and its
	// fan-out jobs read what they copy.
	r.Homes[0] = Home{Design: "this one: query on read", Reads: (Metered["home page"].Reads+celebrityPage.Reads)*homePages + post.Reads - PostAlone.Reads*r.PostsPerDay,
		Writes: post.Writes, Held: held}
	if w.RetentionDays > 0 {
		r.Homes[0].Deletes = chunks
	}
	// Fan-out on write: two commands per follower per post (add, trim)
	// and one a page; the page's activities and authors from the
	// database (the page's reads but its query and the reader's state).
	pageEntities := Metered["home page"].Reads - 2
	r.Homes[1] = Home{Design: "fan-out on write into Redis", Reads: pageEntities * homePages, Writes: r.PostsPerDay,
		Memory: active * HomeSize * RedisBytesPerItem, RedisOps: 2*deliveries + homePages,
		PeakThreads: deliveries / secondsPerDay * w.Peak / RedisDeliveriesPerSecond}
	// Pull: a query per followee (at least a read each: one that finds
	// nothing new is billed one) and the page's activities and authors.
	r.Homes[2] = Home{Design: "pull: a query per followee", Reads: (w.Following + pageEntities) * homePages, Writes: r.PostsPerDay}
	for i := range r.Homes {
		h := &r.Homes[i]
		h.DollarsMonth = month(h.Reads, 0, p.PerReads) + month(h.Writes, 0, p.PerWrites) + month(h.Deletes, 0, p.PerDeletes) +
			h.Held/(1<<30)*p.PerGiBMonth
	}
	return r
}
