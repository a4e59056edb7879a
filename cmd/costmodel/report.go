package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"socialstream/internal/costmodel"
)

// Report writes the results as Markdown tables, one column a workload.
func Report(w io.Writer, rs []costmodel.Result, p costmodel.Prices) {
	row := func(name string, f func(r costmodel.Result) string) {
		cells := make([]string, len(rs))
		for i, r := range rs {
			cells[i] = f(r)
		}
		fmt.Fprintf(w, "| %s | %s |\n", name, strings.Join(cells, " | "))
	}
	head := make([]string, len(rs))
	rule := make([]string, len(rs))
	for i, r := range rs {
		head[i], rule[i] = r.Workload.Name, "---:"
	}
	fmt.Fprintf(w, "| | %s |\n| --- | %s |\n", strings.Join(head, " | "), strings.Join(rule, " | "))
	wl := func(f func(x costmodel.Workload) float64) func(costmodel.Result) string {
		return func(r costmodel.Result) string { return n(f(r.Workload)) }
	}
	row("**workload**: people", wl(func(x costmodel.Workload) float64 { return x.People }))
	row("active in a day", func(r costmodel.Result) string { return fmt.Sprintf("%.0f%%", 100*r.Workload.Active) })
	row("follows of an ordinary person (followers of one)", func(r costmodel.Result) string {
		return n(r.Workload.Following) + " (" + n(r.OrdinaryFollowers) + ")"
	})
	row("celebrities x followers, posts a day each; their posts merged into homes as read past (`CELEBRITY_FOLLOWERS`)", func(r costmodel.Result) string {
		merged := "off"
		if r.Workload.CelebrityThreshold > 0 {
			merged = n(r.Workload.CelebrityThreshold) + " followers"
		}
		return n(r.Workload.Celebrities) + " x " + n(r.Workload.CelebrityFollowers) + ", " + n(r.Workload.CelebrityPosts) + "; " + merged
	})
	row("an active person's day: posts, home pages, other pages, notification pages, unread polls, likes, follows", func(r costmodel.Result) string {
		x := r.Workload
		return strings.Join([]string{n(x.Posts), n(x.HomePages), n(x.OtherPages), n(x.NotificationPages), n(x.UnreadPolls), n(x.Likes), n(x.Follows)}, ", ")
	})
	row("what posts carry: votes an active person casts a day; posts with a link (of those, cards made already); posts scheduled; words a post (each a search term); searches an active person makes a day; posts with hashtags; trends pages an active person reads a day", func(r costmodel.Result) string {
		x := r.Workload
		return n(x.Votes) + "; " + pct(x.LinkShare) + " (" + pct(x.CardShared) + "); " + pct(x.ScheduledShare) + "; " + n(x.Words) + "; " + n(x.Searches) +
			"; " + pct(x.TagShare) + "; " + n(x.TrendPages)
	})
	row("home retention", func(r costmodel.Result) string {
		if r.Workload.RetentionDays == 0 {
			return "for ever"
		}
		return n(r.Workload.RetentionDays) + " days"
	})
	row("federation: inboxes elsewhere a post goes to; posts taken from other servers a day, people here each reaches; follows from them a day", func(r costmodel.Result) string {
		x := r.Workload
		if x.FedInboxes+x.FedPosts+x.FedFollows == 0 {
			return "none"
		}
		return n(x.FedInboxes) + "; " + n(r.Workload.Active*r.Workload.People*x.FedPosts) + ", " + n(x.FedReach) + "; " + n(r.Workload.Active*r.Workload.People*x.FedFollows)
	})
	row("posts a day (by celebrities)", func(r costmodel.Result) string { return n(r.PostsPerDay) + " (" + n(r.CelebrityPostsPerDay) + ")" })
	row("**the whole workload, this design, a day**: entity reads", func(r costmodel.Result) string { return n(r.Day.Reads) })
	row("entity writes", func(r costmodel.Result) string { return n(r.Day.Writes) })
	row("of which federation's: reads / writes / Cloud Tasks operations", func(r costmodel.Result) string {
		f := r.Federation
		return n(f.Reads) + " / " + n(f.Writes) + " / " + n(f.Tasks)
	})
	row("of which what posts carry (votes, links' cards, schedules, search terms and searches, trends): reads / writes / Cloud Tasks operations", func(r costmodel.Result) string {
		c := r.Carried
		return n(c.Reads) + " / " + n(c.Writes) + " / " + n(c.Tasks)
	})
	row("entity deletes", func(r costmodel.Result) string { return n(r.Day.Deletes) })
	row("index entries written", func(r costmodel.Result) string { return n(r.Day.IndexEntries) })
	row("storage added for good", func(r costmodel.Result) string { return size(r.Day.StoredBytes) })
	row("audience copies held (the retention's window)", func(r costmodel.Result) string { return size(r.Day.HeldBytes) })
	row("**a month**: reads / writes / deletes", func(r costmodel.Result) string {
		return n(30*r.Day.Reads) + " / " + n(30*r.Day.Writes) + " / " + n(30*r.Day.Deletes)
	})
	row("storage at the month's end", func(r costmodel.Result) string { return size(30*r.Day.StoredBytes + r.Day.HeldBytes) })
	row("**the page cache**: TTL; share of a home or person's page's activities and authors an instance (or the shared tier) keeps", func(r costmodel.Result) string {
		return n(r.Workload.CacheTTL) + " s; " + fmt.Sprintf("%.0f%%", 100*r.AllIn.HitShare)
	})
	row("the shared cache tier (`PAGE_CACHE_REDIS`, Memorystore): entities kept; GB provisioned; dollars a month", func(r costmodel.Result) string {
		if r.Workload.SharedCache == 0 {
			return "none"
		}
		alone := ""
		if r.Workload.LocalCache == 0 {
			alone = " (alone: `PAGE_CACHE_LOCAL=off`)"
		}
		return fmt.Sprintf("%s; %s; $%s%s", n(r.AllIn.SharedEntries), n(r.AllIn.SharedGB), money(r.AllIn.SharedDollars), alone)
	})
	row("a home page's reads, cold / warm / with the cache", func(r costmodel.Result) string {
		return n(costmodel.Metered["home page"].Reads) + " / " + n(costmodel.Metered["home page, warm"].Reads) + " / " + fmt.Sprintf("%.1f", r.AllIn.PageReads)
	})
	row("reads a day, with no cache / with it", func(r costmodel.Result) string { return n(r.ColdReads) + " / " + n(r.Day.Reads) })
	row("**Datastore dollars a month**, with no cache / with it", func(r costmodel.Result) string {
		return fmt.Sprintf("$%s / $%s", money(r.ColdDollarsMonth), money(r.DollarsMonth))
	})
	row("**Cloud Tasks**: operations a day (tasks created and attempts run)", func(r costmodel.Result) string { return n(r.Day.Tasks) })
	row("Cloud Tasks dollars a month", func(r costmodel.Result) string { return fmt.Sprintf("$%s", money(r.TasksDollarsMonth)) })
	row("**App Engine**: the instance class (the cheapest that holds an instance's memory); requests a day; CPU-seconds a day on it (of which pictures made safe, uploaded and from elsewhere; federation's signing and checking)", func(r costmodel.Result) string {
		return r.Class.Name + "; " + n(r.AllIn.Requests) + "; " + n(r.AllIn.CPUSeconds) + " (" + n(r.AllIn.PictureSeconds) + "; " + n(r.AllIn.FederationSeconds) + ")"
	})
	row("federation: deliveries to other servers a day; requests from them; their pictures fetched and kept", func(r costmodel.Result) string {
		return n(r.AllIn.Deliveries) + "; " + n(r.AllIn.Incoming) + "; " + n(r.AllIn.RemotePictures)
	})
	row("instances up (mean); instance hours a day", func(r costmodel.Result) string {
		return fmt.Sprintf("%.1f; %s", r.AllIn.Instances, n(r.AllIn.InstanceHours))
	})
	row("an instance's memory at most, MB (of its class's): its base, its page cache, its pictures' budget (`UPLOAD_MEMORY`)", func(r costmodel.Result) string {
		return fmt.Sprintf("%s (of %s): %s, %s entries, %s", n(r.AllIn.Memory), n(r.Class.Memory), n(costmodel.BaseMemory), n(r.AllIn.CacheEntries), n(r.Class.UploadMemory))
	})
	row("instance dollars a month", func(r costmodel.Result) string { return "$" + money(r.AllIn.InstanceDollars) })
	row("egress a day (pages gzipped, thumbnails, pictures opened, answers' headers and writes' answers, deliveries to other servers); dollars a month", func(r costmodel.Result) string {
		return fmt.Sprintf("%.1f GiB; $%s", r.AllIn.EgressGiB, money(r.AllIn.EgressDollars))
	})
	row("**Cloud Storage**: pictures at the month's end; operations a day, Class A / B", func(r costmodel.Result) string {
		return fmt.Sprintf("%.1f GiB; %s / %s", r.AllIn.PicturesGiB, n(r.AllIn.ClassA), n(r.AllIn.ClassB))
	})
	row("Cloud Storage dollars a month", func(r costmodel.Result) string { return "$" + money(r.AllIn.StorageDollars) })
	row("**all in, dollars a month**", func(r costmodel.Result) string { return "**$" + money(r.TotalDollarsMonth) + "**" })
	row("posts a second at the peak", func(r costmodel.Result) string { return n(r.PeakPosts) })
	row(fmt.Sprintf("index ranges that grow at one end, writes a second each at the peak, the busiest first (Firestore: about %d)", costmodel.RangeLimit), func(r costmodel.Result) string {
		var rs []string
		for _, g := range r.Ranges {
			rs = append(rs, n(g.PerSecond)+" "+g.Name)
		}
		return strings.Join(rs, "; ")
	})
	row("marks of changes a second at the peak; their shards (`PAGE_CACHE_SHARDS`); an instance's asks for them at most every (`PAGE_CACHE_SYNC`); asks a day, reads", func(r costmodel.Result) string {
		if r.Workload.SharedCache > 0 && r.Workload.LocalCache == 0 {
			return "none: no instance keeps its own"
		}
		return fmt.Sprintf("%s; %.0f; %s s; %s, %s", n(r.PeakMarks), r.Shards, strconv.FormatFloat(r.Workload.CacheSync, 'g', -1, 64), n(r.AllIn.Asks), n(r.AllIn.AskReads))
	})
	for i, name := range []string{"this design", "fan-out on write into Redis", "pull (a query per followee)"} {
		h := func(f func(h costmodel.Home) string) func(costmodel.Result) string {
			return func(r costmodel.Result) string { return f(r.Homes[i]) }
		}
		row("**home feed, "+name+"**: reads / writes / deletes a day", h(func(x costmodel.Home) string {
			return n(x.Reads) + " / " + n(x.Writes) + " / " + n(x.Deletes)
		}))
		switch i {
		case 0:
			row("audience copies held (a year's, with no retention)", h(func(x costmodel.Home) string { return size(x.Held) }))
		case 1:
			row(fmt.Sprintf("Redis: memory of the active people's homes (%d entries each)", costmodel.HomeSize), h(func(x costmodel.Home) string { return size(x.Memory) }))
			row("Redis: commands a day; threads busy at the peak", h(func(x costmodel.Home) string { return n(x.RedisOps) + "; " + fmt.Sprintf("%.2f", x.PeakThreads) }))
		}
		row("database dollars a month", h(func(x costmodel.Home) string { return "$" + money(x.DollarsMonth) }))
	}
	fmt.Fprintf(w, "\nPrices: %s: $%g per 100,000 reads, $%g per 100,000 writes, $%g per 100,000 deletes, $%g per GiB-month, less the free daily quota.\n",
		p.Source, p.PerReads, p.PerWrites, p.PerDeletes, p.PerGiBMonth)
	fmt.Fprintf(w, "%s: $%.2f per million operations past the first %s a month.\n", p.TasksSource, p.PerMillionTasks, n(p.FreeTasks))
	fmt.Fprintf(w, "%s: $%.2f per F1 instance hour (%s: %s), %s F1 hours a day free; $%.2f per GiB out, %s GiB a day free.\n",
		p.AppEngineSource, p.PerF1Hour, costmodel.F2.Name, n(costmodel.F2.F1Hours), n(p.FreeF1Hours), p.PerEgressGiB, n(p.FreeEgressGiB))
	fmt.Fprintf(w, "Instance classes: F1 at %.1f GHz with %s MB, F2 at %.1f GHz with %s MB (App Engine's); on F1, app.yaml's UPLOAD_MEMORY %s MiB and PAGE_CACHE_ENTRIES %s.\n",
		costmodel.F1.GHz, n(costmodel.F1.Memory), costmodel.F2.GHz, n(costmodel.F2.Memory), n(costmodel.F1UploadMemory*1e6/(1<<20)), n(costmodel.F1CacheEntries))
	fmt.Fprintf(w, "%s: $%.3f per GiB-month, $%.3f per 10,000 Class A and $%.4f per 10,000 Class B operations; %s GiB-months, %s Class A and %s Class B a month free.\n",
		p.StorageSource, p.PerStorageGiBMonth, p.PerClassA, p.PerClassB, n(p.FreeStorageGiB), n(p.FreeClassA), n(p.FreeClassB))
	fmt.Fprintf(w, "%s: $%.3f per GB-hour, at least %s GB; the connector $%.2f a month.\n", p.RedisSource, p.PerRedisGBHour, n(p.MinRedisGB), p.VPCConnectorMonth)
	m := costmodel.Measured
	fmt.Fprintf(w, "Serving, measured by %s, GOMAXPROCS %d: %.1f ms of CPU a page, %.1f an unread count, %.1f a like with its job, %.1f a thumbnail; a page of 20 %s bytes (sent gzipped, %dx smaller); %s bytes of heap a cached entity. Scaled from the measuring core's %.1f GHz to a class's clock, at App Engine's target CPU of %.0f%%.\n",
		m.Source, m.Procs, m.PageCPU, m.PollCPU, m.WriteCPU, m.PictureCPU, n(m.PageBytes), costmodel.GzipRatio, n(m.CacheEntryBytes), m.MachineGHz, 100*costmodel.TargetUtilization)
	fmt.Fprintf(w, "Pictures and federation, measured by media's BenchmarkProcess and federation's BenchmarkSign and BenchmarkVerify on the same core: %s ms to make a 12-megapixel photo safe, %.1f ms to sign a delivery, %.2f ms to check one.\n",
		n(m.ProcessCPU), m.SignCPU, m.VerifyCPU)
}

// n writes a count with SI-like suffixes.
func n(v float64) string {
	switch {
	case v >= 1e12:
		return fmt.Sprintf("%.1fT", v/1e12)
	case v >= 1e9:
		return fmt.Sprintf("%.1fG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v >= 100 || v == float64(int64(v)):
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func size(b float64) string {
	switch {
	case b >= 1<<40:
		return fmt.Sprintf("%.1f TiB", b/(1<<40))
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.0f MiB", b/(1<<20))
	}
	return fmt.Sprintf("%.0f KiB", b/(1<<10))
}

func money(d float64) string {
	if d >= 100 {
		return fmt.Sprintf("%.0f", d)
	}
	return fmt.Sprintf("%.2f", d)
}

// pct writes a share as a percentage.
func pct(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }
