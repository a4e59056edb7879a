package main

import (
	"fmt"
	"io"
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
	row("celebrities x followers, posts a day each", func(r costmodel.Result) string {
		return n(r.Workload.Celebrities) + " x " + n(r.Workload.CelebrityFollowers) + ", " + n(r.Workload.CelebrityPosts)
	})
	row("an active person's day: posts, home pages, other pages, notification pages, unread polls, likes, follows", func(r costmodel.Result) string {
		x := r.Workload
		return strings.Join([]string{n(x.Posts), n(x.HomePages), n(x.OtherPages), n(x.NotificationPages), n(x.UnreadPolls), n(x.Likes), n(x.Follows)}, ", ")
	})
	row("home retention", func(r costmodel.Result) string {
		if r.Workload.RetentionDays == 0 {
			return "for ever"
		}
		return n(r.Workload.RetentionDays) + " days"
	})
	row("posts a day (by celebrities)", func(r costmodel.Result) string { return n(r.PostsPerDay) + " (" + n(r.CelebrityPostsPerDay) + ")" })
	row("**the whole workload, this design, a day**: entity reads", func(r costmodel.Result) string { return n(r.Day.Reads) })
	row("entity writes", func(r costmodel.Result) string { return n(r.Day.Writes) })
	row("entity deletes", func(r costmodel.Result) string { return n(r.Day.Deletes) })
	row("index entries written", func(r costmodel.Result) string { return n(r.Day.IndexEntries) })
	row("storage added for good", func(r costmodel.Result) string { return size(r.Day.StoredBytes) })
	row("audience copies held (the retention's window)", func(r costmodel.Result) string { return size(r.Day.HeldBytes) })
	row("**a month**: reads / writes / deletes", func(r costmodel.Result) string {
		return n(30*r.Day.Reads) + " / " + n(30*r.Day.Writes) + " / " + n(30*r.Day.Deletes)
	})
	row("storage at the month's end", func(r costmodel.Result) string { return size(30*r.Day.StoredBytes + r.Day.HeldBytes) })
	row("dollars a month", func(r costmodel.Result) string { return fmt.Sprintf("$%s", money(r.DollarsMonth)) })
	row("**Cloud Tasks**: operations a day (tasks created and attempts run)", func(r costmodel.Result) string { return n(r.Day.Tasks) })
	row("Cloud Tasks dollars a month", func(r costmodel.Result) string { return fmt.Sprintf("$%s", money(r.TasksDollarsMonth)) })
	row("posts a second at the peak", func(r costmodel.Result) string { return n(r.PeakPosts) })
	row("busiest sequential index range, writes a second at the peak (Firestore: about 500)", func(r costmodel.Result) string {
		return n(r.HottestRange) + " (" + r.HottestName + ")"
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
	fmt.Fprintf(w, "\nPrices: %s: $%.2f per 100,000 reads, $%.2f per 100,000 writes, $%.2f per 100,000 deletes, $%.2f per GiB-month, less the free daily quota.\n",
		p.Source, p.PerReads, p.PerWrites, p.PerDeletes, p.PerGiBMonth)
	fmt.Fprintf(w, "%s: $%.2f per million operations past the first %s a month.\n", p.TasksSource, p.PerMillionTasks, n(p.FreeTasks))
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
