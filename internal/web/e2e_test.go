package web_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"golang.org/x/crypto/bcrypt"

	"socialstream/internal/accounts"
	"socialstream/internal/app"
	"socialstream/internal/ids"
	"socialstream/internal/localstack"
	"socialstream/internal/logging"
	"socialstream/internal/moderation"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) {
	code := testenv.Main(m)
	stopBrowser()
	os.Exit(code)
}

// slowPath is answered a second late, so the test can see the page while a
// request is under way.
const slowPath = "/social/rest/activities/@me/@mentions"

// TestTwoPeople drives the page in headless Chromium at a phone's width: two
// people sign up, one follows the other, the other posts mentioning the
// first, and the first sees the post at home and the mention counted on the
// notification badge. Screenshots of each step are kept in the folder the
// test names (SOCIALSTREAM_E2E_DIR, else socialstream-e2e in the temporary
// directory).
func TestTwoPeople(t *testing.T) {
	t.Parallel() // a stack, a namespace and tabs of its own
	url := startStack(t)
	browserCtx := startBrowser(t)
	shots := screenshotDir(t)
	ann := newTab(t, browserCtx, "ann", shots) // follows bob
	bob := newTab(t, browserCtx, "bob", shots) // posts, mentioning ann

	// Ann signs up with the keyboard only: Enter submits the form.
	ann.do(chromedp.Navigate(url+"/#/signup"), chromedp.WaitVisible(chromedp.CSS(`input[name=username]`)))
	ann.checkLabels()
	ann.do(
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), "ann"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "password-ann"+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`#nav`)),
		chromedp.WaitVisible(chromedp.CSS(`form.composer`)),
	)
	ann.checkLabels()
	ann.checkFitsWidth()
	ann.shot("signed-up")

	// Bob first asks for a name that is taken: the API's message is shown
	// and nothing else happens.
	bob.do(chromedp.Navigate(url+"/#/signup"), chromedp.WaitVisible(chromedp.CSS(`input[name=username]`)))
	bob.do(
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), "ANN"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "password-bob"),
		chromedp.Click(chromedp.CSS(`form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`#error`)),
	)
	if msg := bob.text(`#error`); !strings.Contains(strings.ToLower(msg), "taken") {
		t.Errorf("error shown for a taken name = %q, want the API's message", msg)
	}
	if bob.eval(`getComputedStyle(document.getElementById('nav')).display !== 'none'`) {
		t.Error("signed in after a refused sign-up")
	}
	bob.shot("name-taken")
	bob.eval(`(document.querySelector('input[name=username]').value = '') === ''`)
	bob.do(
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), "bob"),
		chromedp.Click(chromedp.CSS(`form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`form.composer`)),
	)
	if bob.eval(`getComputedStyle(document.getElementById('error')).display !== 'none'`) {
		t.Errorf("error still shown after signing up: %q", bob.text(`#error`))
	}

	// Ann finds bob and follows him, from the keyboard.
	ann.do(
		chromedp.SendKeys(chromedp.CSS(`input[name=find]`), "bob"+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`button[aria-label="Follow @bob"]`)),
		chromedp.Focus(chromedp.CSS(`button[aria-label="Follow @bob"]`)),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`button[aria-label="Unfollow @bob"]`)),
	)
	if got := ann.text(`.person .counts`); !strings.HasPrefix(got, "1 follower ") {
		t.Errorf("bob's counts after the follow = %q, want 1 follower", got)
	}
	ann.shot("follows-bob")

	// Bob posts, mentioning ann.
	const post = "Hello @ann, welcome to socialstream!"
	bob.do(
		chromedp.SendKeys(chromedp.CSS(`form.composer textarea`), post),
		chromedp.Click(chromedp.CSS(`form.composer button[type=submit]`)),
	)
	bob.waitFor(`[...document.querySelectorAll('.stream .activity .title')].some(e => e.textContent === `+jsString(post)+`)`,
		"bob's post in his own home feed", nil)
	bob.shot("posted")

	// Ann sees it at home, the mention a link to her page.
	ann.do(chromedp.Click(chromedp.CSS(`#nav a[data-nav=home]`)), chromedp.WaitVisible(chromedp.CSS(`section.feed`)))
	ann.waitFor(`[...document.querySelectorAll('.stream .activity .title')].some(e => e.textContent === `+jsString(post)+`)`,
		"bob's post at ann's home", func() { ann.do(chromedp.Click(chromedp.CSS(`section.feed .row button`))) })
	if !ann.eval(`document.querySelector('.stream .activity .title a.mention[href="#/people/ann"]') !== null`) {
		t.Error("the mention of ann is not a link to her page")
	}
	if got := ann.text(`.stream .activity`); strings.Contains(got, "null") || strings.Contains(got, "undefined") {
		t.Errorf("the post renders as %q", got)
	}
	// The badge counts the mention (the notification is made by a job).
	ann.waitFor(`document.getElementById('badge').textContent === '1' && getComputedStyle(document.getElementById('badge')).display !== 'none'`,
		"a badge of 1", func() { ann.do(chromedp.Click(chromedp.CSS(`.tabs a[href="#/home"]`))) })
	if label := ann.attr(`#notif-link`, "aria-label"); label != "Notifications, 1 unread" {
		t.Errorf("badge link label = %q", label)
	}
	ann.checkFitsWidth()
	ann.shot("home-with-mention")

	// A slow answer: the page says it is busy, and shows the answer when
	// it comes.
	ann.do(chromedp.Click(chromedp.CSS(`.tabs a[href="#/mentions"]`)))
	ann.waitFor(`document.getElementById('busy').classList.contains('on') && document.getElementById('main').getAttribute('aria-busy') === 'true'`,
		"the busy indicator during a slow request", nil)
	ann.shot("busy")
	ann.waitFor(`!document.getElementById('busy').classList.contains('on') && document.querySelectorAll('.stream .activity').length === 1`,
		"the mentions feed after the slow answer", nil)

	// The list marks them read and the badge goes.
	ann.do(chromedp.Click(chromedp.CSS(`#notif-link`)), chromedp.WaitVisible(chromedp.CSS(`.notes li.unread`)))
	if got := ann.text(`.notes li.unread`); !strings.Contains(got, "bob mentioned you") {
		t.Errorf("notification = %q, want bob mentioned you", got)
	}
	ann.shot("notifications")
	ann.do(chromedp.Click(chromedp.CSS(`main .row button`)))
	ann.waitFor(`document.querySelector('.notes li.unread') === null && getComputedStyle(document.getElementById('badge')).display === 'none'`,
		"notifications read and the badge gone", nil)
	ann.shot("read")

	// Ann logs out, and back in.
	ann.do(
		chromedp.Click(chromedp.CSS(`#logout`)),
		chromedp.WaitVisible(chromedp.CSS(`input[name=username]`)),
	)
	if ann.eval(`getComputedStyle(document.getElementById('nav')).display !== 'none' || localStorage.length !== 0`) {
		t.Error("still signed in after logging out")
	}
	ann.do(
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), "ann"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "password-ann"+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`form.composer`)),
	)
	ann.waitFor(`[...document.querySelectorAll('.stream .activity .title')].some(e => e.textContent === `+jsString(post)+`)`,
		"bob's post at home after logging in again", nil)
	ann.shot("logged-in-again")

	// Bob posts again while ann is at home: her page says so, and shows
	// it when asked, without her reloading the page. (The page looks
	// every 30 seconds; the test makes it look now.)
	const again = "Anyone there?"
	bob.do(
		chromedp.SendKeys(chromedp.CSS(`form.composer textarea`), again),
		chromedp.Click(chromedp.CSS(`form.composer button[type=submit]`)),
	)
	ann.waitFor(`(document.querySelector('section.feed').poll(), document.querySelector('section.feed .fresh:not([hidden])')?.textContent === '1 new')`,
		"1 new at ann's home", nil)
	ann.shot("one-new")
	ann.do(chromedp.Click(chromedp.CSS(`section.feed .fresh`)))
	ann.waitFor(`document.querySelector('.stream .activity .title')?.textContent === `+jsString(again)+
		` && document.querySelector('section.feed .fresh').hidden`, "the new post on top", nil)

	// Bob fixes his post in place: the page draws it as the server
	// answers, marked edited.
	const fixed = "Hello @ann, welcome to socialstream, edited!"
	bob.do(
		chromedp.Click(chromedp.CSS(`.stream .activity button[aria-label="Edit this post"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.stream .activity form.edit textarea[name=title]`)),
	)
	bob.checkLabels()
	bob.do(
		chromedp.SetValue(chromedp.CSS(`form.edit textarea[name=title]`), fixed),
		chromedp.Click(chromedp.CSS(`form.edit button[type=submit]`)),
	)
	bob.waitFor(`[...document.querySelectorAll('.stream .activity')].some(e => e.querySelector('.title').textContent === `+jsString(fixed)+
		` && e.querySelector('.edited') !== null) && document.querySelector('form.edit') === null`, "bob's post edited in place", nil)
	bob.shot("edited")

	// A post behind a content warning is folded at ann's home until she
	// asks for the rest.
	const warning, behind = "spoilers: the finale", "The butler did it."
	bob.do(
		chromedp.SendKeys(chromedp.CSS(`form.composer textarea`), behind),
		chromedp.SendKeys(chromedp.CSS(`form.composer input[name=spoilerText]`), warning),
		chromedp.Click(chromedp.CSS(`form.composer button[type=submit]`)),
	)
	ann.waitFor(`(document.querySelector('section.feed').poll(), document.querySelector('section.feed .fresh:not([hidden])') !== null)`,
		"bob's warned post announced", nil)
	ann.do(chromedp.Click(chromedp.CSS(`section.feed .fresh`)))
	ann.waitFor(`(() => { const w = document.querySelector('.stream .activity .warned');
		return w !== null && w.querySelector('.spoiler').textContent.includes(`+jsString(warning)+`) &&
			w.querySelector('.content').hidden && w.querySelector('.title').textContent === `+jsString(behind)+` })()`,
		"the warned post folded", nil)
	ann.shot("content-warning")
	ann.do(chromedp.Click(chromedp.CSS(`.stream .activity .warned button`)))
	ann.waitFor(`!document.querySelector('.stream .activity .warned .content').hidden`, "the warned post unfolded", nil)

	// Ann answers it: the page opens her reply in its thread, under what
	// it answers.
	ann.do(chromedp.Click(chromedp.CSS(`.stream .activity button[aria-label="Reply to this post"]`)),
		chromedp.WaitVisible(chromedp.CSS(`form.composer.reply textarea`)))
	ann.checkLabels()
	ann.do(chromedp.SendKeys(chromedp.CSS(`form.composer.reply textarea`), "No spoilers here!"),
		chromedp.Click(chromedp.CSS(`form.composer.reply button[type=submit]`)))
	ann.waitFor(`(() => { const up = document.querySelector('.stream.thread .activity .title'); const me = document.querySelector('.focus .activity .title');
		return up?.textContent === `+jsString(behind)+` && me?.textContent === '@bob No spoilers here!'; })()`, "ann's reply in its thread", nil)
	ann.shot("reply")

	ann.checkConsole()
	bob.checkConsole()
}

// TestGroupsCommentsLikes drives groups, likes, comments and their
// notifications: dan makes a group, cat finds it on his page and joins, dan
// posts, cat sees it on the group's tab, likes it and comments, and dan's
// notifications say so.
func TestGroupsCommentsLikes(t *testing.T) {
	t.Parallel() // a stack, a namespace and tabs of its own
	_, cat, dan := twoPeople(t, "cat", "dan")
	dan.createGroup("Go fans", "Gophers of the world", "open")
	dan.waitFor(`location.hash.startsWith('#/group/') && document.querySelector('main h1')?.textContent === 'Go fans'`,
		"the new group's page", nil)
	if got := dan.text(`main .card .counts`); got != "1 member · open group" {
		t.Errorf("new group = %q", got)
	}
	if dan.eval(`[...document.querySelectorAll('main .card button')].some(b => b.textContent === 'Leave group')`) {
		t.Error("the owner is offered to leave")
	}
	dan.checkLabels()
	dan.shot("group-created")

	// Cat finds dan, his group on his page, and joins.
	cat.do(
		chromedp.SendKeys(chromedp.CSS(`input[name=find]`), "dan"+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`main a[href^="#/group/"]`)),
		chromedp.Click(chromedp.CSS(`main a[href^="#/group/"]`)),
	)
	cat.waitFor(`[...document.querySelectorAll('main .card button')].some(b => b.textContent === 'Join group')`, "a join button", nil)
	cat.clickButton("Join group")
	cat.waitFor(`[...document.querySelectorAll('main .card button')].some(b => b.textContent === 'Leave group')`, "a leave button", nil)
	if got := cat.text(`main .card .counts`); got != "2 members · open group" {
		t.Errorf("group after the join = %q", got)
	}
	if !cat.eval(`document.querySelector('.tabs a[aria-current=page]')?.textContent === 'Go fans'`) {
		t.Error("no current tab for the group")
	}
	cat.shot("joined")

	const post = "Gophers unite"
	dan.do(
		chromedp.Click(chromedp.CSS(`#nav a[data-nav=home]`)),
		chromedp.WaitVisible(chromedp.CSS(`form.composer textarea`)),
		chromedp.SendKeys(chromedp.CSS(`form.composer textarea`), post),
		chromedp.Click(chromedp.CSS(`form.composer button[type=submit]`)),
	)
	// Cat was not following dan: the post reaches her through the group.
	cat.waitFor(`[...document.querySelectorAll('.stream .activity .title')].some(e => e.textContent === `+jsString(post)+`)`,
		"dan's post on the group's tab", func() { cat.do(chromedp.Click(chromedp.CSS(`section.feed .row button`))) })
	cat.clickButton("♡ Like (0)")
	cat.waitFor(`document.querySelector('.activity button[aria-pressed]').getAttribute('aria-pressed') === 'true'`, "a pressed like", nil)
	if got := cat.text(`.activity button[aria-pressed]`); got != "♥ Liked (1)" {
		t.Errorf("like button = %q", got)
	}
	cat.clickButton("Comments (0)")
	cat.do(
		chromedp.WaitVisible(chromedp.CSS(`.comment-form input`)),
		chromedp.SendKeys(chromedp.CSS(`.comment-form input`), "Count me in @dan"+kb.Enter),
	)
	cat.waitFor(`document.querySelector('.comment-list')?.textContent.includes('Count me in')`, "the comment", nil)
	if got := cat.text(`.activity button[aria-controls]`); got != "Comments (1)" {
		t.Errorf("comments button after commenting = %q", got)
	}
	cat.checkLabels()
	cat.checkFitsWidth()
	cat.shot("liked-and-commented")

	// Dan hears of the join, the like and the comment.
	dan.waitFor(`document.getElementById('badge').textContent === '3'`, "a badge of 3",
		func() { dan.do(chromedp.Click(chromedp.CSS(`.tabs a[href="#/mine"]`))) })
	dan.do(chromedp.Click(chromedp.CSS(`#notif-link`)), chromedp.WaitVisible(chromedp.CSS(`.notes li.unread`)))
	got := dan.text(`.notes`)
	for _, want := range []string{"cat joined your group", "cat liked your post", "cat commented on your post"} {
		if !strings.Contains(got, want) {
			t.Errorf("notifications %q lack %q", got, want)
		}
	}
	dan.shot("notifications")

	// Cat leaves; the group's tab goes.
	cat.do(chromedp.Click(chromedp.CSS(`.tabs a[aria-current=page]`)))
	cat.waitFor(`[...document.querySelectorAll('main .card button')].some(b => b.textContent === 'Leave group')`, "a leave button", nil)
	cat.clickButton("Leave group")
	cat.waitFor(`[...document.querySelectorAll('main .card button')].some(b => b.textContent === 'Join group')`, "a join button again", nil)
	if cat.eval(`[...document.querySelectorAll('.tabs a')].some(a => a.textContent === 'Go fans')`) {
		t.Error("the group's tab is still there after leaving")
	}
	cat.shot("left")

	// Cat keeps dan's post in her bookmarks, which she alone sees.
	cat.do(chromedp.Click(chromedp.CSS(`.tabs a[href="#/public"]`)))
	cat.waitFor(`document.querySelector('.tabs a[href="#/public"][aria-current=page]') !== null &&
		[...document.querySelectorAll('.stream .activity .title')].some(e => e.textContent === `+jsString(post)+`)`,
		"dan's post on the public tab", nil)
	cat.clickButton("Bookmark")
	cat.waitFor(`[...document.querySelectorAll('main button')].some(b => b.textContent === '🔖 Bookmarked')`, "a pressed bookmark", nil)
	cat.do(chromedp.Click(chromedp.CSS(`.tabs a[href="#/bookmarks"]`)))
	cat.waitFor(`document.querySelector('.tabs a[href="#/bookmarks"][aria-current=page]') !== null &&
		[...document.querySelectorAll('.stream .activity .title')].some(e => e.textContent === `+jsString(post)+`)`,
		"dan's post among cat's bookmarks", nil)
	cat.shot("bookmarks")

	// Dan pins his post: his page shows it first, marked pinned.
	dan.do(chromedp.Click(chromedp.CSS(`#me-link`)))
	dan.waitFor(`[...document.querySelectorAll('main button')].some(b => b.textContent === 'Pin')`, "a pin button on dan's page", nil)
	dan.clickButton("Pin")
	dan.waitFor(`[...document.querySelectorAll('main button')].some(b => b.textContent === 'Unpin')`, "the post pinned", nil)
	dan.do(chromedp.Click(chromedp.CSS(`#nav a[data-nav=home]`)), chromedp.WaitVisible(chromedp.CSS(`form.composer`)),
		chromedp.Click(chromedp.CSS(`#me-link`)))
	dan.waitFor(`(() => { const p = document.querySelector('.stream.pinned .activity');
		return p !== null && p.querySelector('.title').textContent === `+jsString(post)+` && p.querySelector('.pinned') !== null })()`,
		"the pinned post first on dan's page", nil)
	dan.checkLabels()
	dan.shot("pinned")

	cat.checkConsole()
	dan.checkConsole()
}

// startStack serves the app over real HTTP against the emulator, with its
// jobs run by the tasks emulator. It returns the base URL.
// TestInvitationToAClosedGroup: the owner of a closed group invites a
// person (by the API: the page has no invite button yet); the invitee
// reads the notification, opens the group, sees only an invitation and
// accepts it, and the group's feed opens.
func TestInvitationToAClosedGroup(t *testing.T) {
	t.Parallel() // a stack, a namespace and tabs of its own
	url, fay, gus := twoPeople(t, "fay", "gus")
	fay.createGroup("Inner circle", "", "closed")
	fay.waitFor(`document.querySelector('main h1')?.textContent === 'Inner circle'`, "the new group's page", nil)
	if got := fay.text(`main .card .counts`); got != "1 member · closed group" {
		t.Errorf("new group = %q", got)
	}
	group := strings.TrimPrefix(fay.evalString(`decodeURIComponent(location.hash)`), "#/group/")
	token := fay.evalString(`localStorage.getItem('socialstream.token')`)
	req, _ := http.NewRequest("POST", url+"/social/rest/groups/@all/"+group+"/members", strings.NewReader(`{"id":"@username:gus"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusAccepted {
		t.Fatalf("invite: %v %v", res, err)
	}
	res.Body.Close()

	gus.waitFor(`document.getElementById('badge').textContent === '1'`, "a badge of 1",
		func() { gus.do(chromedp.Click(chromedp.CSS(`.tabs a[href="#/mine"]`))) })
	gus.do(chromedp.Click(chromedp.CSS(`#notif-link`)), chromedp.WaitVisible(chromedp.CSS(`.notes li.unread`)))
	if got := gus.text(`.notes`); !strings.Contains(got, "fay invited you to a group") {
		t.Errorf("notifications %q lack the invitation", got)
	}
	gus.shot("invited")
	gus.do(chromedp.Click(chromedp.CSS(`.notes a[href^="#/group/"]`)))
	gus.waitFor(`[...document.querySelectorAll('main .card button')].some(b => b.textContent === 'Accept invitation')`, "an accept button", nil)
	if gus.eval(`[...document.querySelectorAll('main .card button')].some(b => b.textContent === 'Join group')`) {
		t.Error("an invited person is offered to join as if the group were open")
	}
	gus.checkLabels()
	gus.shot("invitation")
	gus.clickButton("Accept invitation")
	gus.waitFor(`[...document.querySelectorAll('main .card button')].some(b => b.textContent === 'Leave group')`, "a leave button", nil)
	if got := gus.text(`main .card .counts`); got != "2 members · closed group" {
		t.Errorf("group after accepting = %q", got)
	}
	gus.waitFor(`!!document.querySelector('section.feed')`, "the group's feed", nil)
	gus.shot("accepted")
	gus.checkConsole()
	fay.checkConsole()
}

// TestBlockAndDeleteAccount drives a mute and an unmute, then a block from
// a person's page (asked
// once more, it ends the follow and hides the follow button; the other
// can then not follow), an unblock, the download of one's data and the
// deletion of one's account behind the password.
func TestBlockAndDeleteAccount(t *testing.T) {
	t.Parallel() // a stack, a namespace and tabs of its own
	_, hal, ivy := twoPeople(t, "hal", "ivy")
	hal.do(
		chromedp.SendKeys(chromedp.CSS(`input[name=find]`), "ivy"+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`button[aria-label="Follow @ivy"]`)),
		chromedp.Click(chromedp.CSS(`button[aria-label="Follow @ivy"]`)),
		chromedp.WaitVisible(chromedp.CSS(`button[aria-label="Unfollow @ivy"]`)),
		chromedp.Click(chromedp.CSS(`button[aria-label="Mute @ivy"]`)),
		chromedp.WaitVisible(chromedp.CSS(`button[aria-label="Unmute @ivy"]`)),
	)
	// The mute is the server's: the page drawn anew says so.
	hal.do(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`button[aria-label="Unmute @ivy"]`)))
	hal.shot("muted")
	hal.do(
		chromedp.Click(chromedp.CSS(`button[aria-label="Unmute @ivy"]`)),
		chromedp.WaitVisible(chromedp.CSS(`button[aria-label="Mute @ivy"]`)),
		chromedp.Click(chromedp.CSS(`button[aria-label="Block @ivy"]`)),
	)
	hal.waitFor(`document.querySelector('main .person .hint')?.textContent.includes('stop following each other')`, "the block explained", nil)
	hal.shot("block-asked")
	hal.clickButton("Block @ivy")
	hal.waitFor(`!!document.querySelector('button[aria-label="Unblock @ivy"]')`, "an unblock button", nil)
	if hal.eval(`!!document.querySelector('button[aria-label="Unfollow @ivy"]')?.offsetParent || !!document.querySelector('button[aria-label="Follow @ivy"]')?.offsetParent`) {
		t.Error("a follow button shows for someone blocked")
	}
	if got := hal.text(`.person .counts`); got != "0 followers · 0 following" {
		t.Errorf("ivy's counts after the block = %q", got)
	}
	hal.shot("blocked")

	ivy.do(
		chromedp.SendKeys(chromedp.CSS(`input[name=find]`), "hal"+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`button[aria-label="Follow @hal"]`)),
		chromedp.Click(chromedp.CSS(`button[aria-label="Follow @hal"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#error`)),
	)
	if msg := ivy.text(`#error`); !strings.Contains(msg, "blocks") {
		t.Errorf("error for following someone who blocks you = %q", msg)
	}
	ivy.shot("follow-refused")

	hal.clickButton("Unblock")
	hal.waitFor(`!!document.querySelector('button[aria-label="Follow @ivy"]')?.offsetParent`, "a follow button again, not following", nil)

	// Hal downloads his data, then deletes his account.
	hal.do(chromedp.Click(chromedp.CSS(`#me-link`)))
	hal.waitFor(`[...document.querySelectorAll('main button')].some(b => b.textContent === 'Download my data')`, "the download button", nil)
	hal.clickButton("Download my data")
	hal.waitFor(`document.querySelector('.account [role=status]')?.textContent.startsWith('Downloaded your data: 0 posts')`, "the download's summary", nil)
	hal.checkLabels()
	hal.checkFitsWidth()
	hal.shot("account")
	hal.do(chromedp.SendKeys(chromedp.CSS(`.danger-zone input[name=password]`), "wrong password"))
	hal.clickButton("Delete my account")
	hal.do(chromedp.WaitVisible(chromedp.CSS(`#error`)))
	if msg := hal.text(`#error`); !strings.Contains(strings.ToLower(msg), "wrong password") {
		t.Errorf("error for a wrong password = %q", msg)
	}
	if !hal.eval(`getComputedStyle(document.getElementById('nav')).display !== 'none'`) {
		t.Fatal("signed out by a refused deletion")
	}
	hal.eval(`(document.querySelector('.danger-zone input[name=password]').value = '') === ''`)
	hal.do(chromedp.SendKeys(chromedp.CSS(`.danger-zone input[name=password]`), "password-hal"))
	hal.clickButton("Delete my account")
	hal.do(chromedp.WaitVisible(chromedp.CSS(`input[name=username]`)))
	if msg := hal.text(`#error`); !strings.Contains(msg, "account is deleted") {
		t.Errorf("message after the deletion = %q", msg)
	}
	hal.shot("deleted")
	hal.do(
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), "hal"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "password-hal"+kb.Enter),
	)
	hal.waitFor(`document.getElementById('error').textContent.toLowerCase().includes('wrong username or password')`, "the old login refused", nil)
	hal.checkConsole()
	ivy.checkConsole()
}

// TestLockedAccountOnThePage locks an account from its own page; the other
// person asks to follow, the request shows on the locked person's page
// with its notification, and the approval makes a follower, who then adds
// a keyword filter that folds a post behind a warning.
func TestLockedAccountOnThePage(t *testing.T) {
	t.Parallel() // a stack, a namespace and tabs of its own
	_, kim, lou := twoPeople(t, "kim", "lou")
	kim.do(chromedp.Click(chromedp.CSS(`#me-link`)), chromedp.WaitVisible(chromedp.CSS(`.privacy input[name=locked]`)),
		chromedp.Click(chromedp.CSS(`.privacy input[name=locked]`)))
	kim.waitFor(`!!document.querySelector('.privacy [role=status]')?.textContent.includes('locked')`, "the lock confirmed", nil)

	lou.do(
		chromedp.SendKeys(chromedp.CSS(`input[name=find]`), "kim"+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`button[aria-label="Ask to follow @kim"]`)),
	)
	if got := lou.text(`main .person .hint`); !strings.Contains(got, "Locked account") {
		t.Errorf("a locked person's page says %q", got)
	}
	lou.do(chromedp.Click(chromedp.CSS(`button[aria-label="Ask to follow @kim"]`)),
		chromedp.WaitVisible(chromedp.CSS(`button[aria-label="Withdraw request @kim"]`)))
	if got := lou.text(`.person .counts`); got != "0 followers · 0 following" {
		t.Errorf("kim's counts while the request waits = %q", got)
	}
	lou.shot("requested")

	kim.waitFor(`document.getElementById('badge').textContent === '1'`, "a badge of 1",
		func() { kim.do(chromedp.Click(chromedp.CSS(`#me-link`))) })
	kim.do(chromedp.Click(chromedp.CSS(`#notif-link`)), chromedp.WaitVisible(chromedp.CSS(`.notes li.unread`)))
	if got := kim.text(`.notes`); !strings.Contains(got, "lou asked to follow you") {
		t.Errorf("notifications %q lack the request", got)
	}
	kim.do(chromedp.Click(chromedp.CSS(`#me-link`)), chromedp.WaitVisible(chromedp.CSS(`button[aria-label="Approve @lou"]`)))
	kim.checkLabels()
	kim.shot("requests")
	kim.do(chromedp.Click(chromedp.CSS(`button[aria-label="Approve @lou"]`)))
	kim.waitFor(`!!document.querySelector('.requests')?.textContent.includes('now follows you')`, "the approval", nil)

	lou.do(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`button[aria-label="Unfollow @kim"]`)))
	if got := lou.text(`.person .counts`); got != "1 follower · 0 following" {
		t.Errorf("kim's counts after the approval = %q", got)
	}

	// Lou adds a keyword filter that warns; kim's post with the word is
	// folded behind it at lou's home until lou asks to see it.
	lou.do(chromedp.Click(chromedp.CSS(`#me-link`)), chromedp.WaitVisible(chromedp.CSS(`.filter-form input[name=keyword]`)),
		// Enter submits the form: a click's point can move as the lists
		// above it (requests, filters) fill in.
		chromedp.SendKeys(chromedp.CSS(`.filter-form input[name=keyword]`), "finale"+kb.Enter))
	lou.waitFor(`!!document.querySelector('.filters')?.textContent.includes('finale: finale (warn')`, "the filter listed", nil)
	lou.checkLabels()
	lou.shot("filter")
	const post = "What a finale tonight"
	kim.do(chromedp.Click(chromedp.CSS(`#nav a[data-nav=home]`)), chromedp.WaitVisible(chromedp.CSS(`form.composer textarea`)),
		chromedp.SendKeys(chromedp.CSS(`form.composer textarea`), post),
		chromedp.Click(chromedp.CSS(`form.composer button[type=submit]`)))
	lou.do(chromedp.Click(chromedp.CSS(`#nav a[data-nav=home]`)), chromedp.WaitVisible(chromedp.CSS(`section.feed`)))
	lou.waitFor(`!!document.querySelector('.stream .activity.filtered')?.textContent.includes('Filtered: finale (finale)')`,
		"kim's post folded at lou's home", func() { lou.do(chromedp.Click(chromedp.CSS(`section.feed .row button`))) })
	lou.shot("filtered")
	lou.clickButton("Show anyway")
	lou.waitFor(`[...document.querySelectorAll('.stream .activity .title')].some(e => e.textContent === `+jsString(post)+`)`, "the post shown", nil)
	kim.checkConsole()
	lou.checkConsole()
}

// A fresh load of a feed that the server read before the reader posted,
// and that answers after the post was on the page, keeps the post there:
// the answer only could not know of it. (It once emptied the page, as
// the moderation test sometimes found, posting right after signing up.)
func TestPostOutlivesALoadUnderWay(t *testing.T) {
	t.Parallel() // a stack, a namespace and tabs of its own
	held, release := make(chan struct{}), make(chan struct{})
	var arm atomic.Bool
	url := startStackWrapped(t, testenv.DB(t), nil, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/activities/@me/@friends") || !arm.CompareAndSwap(true, false) {
				h.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r) // read now, before the post
			close(held)
			<-release
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes())
		})
	})
	amy := newTab(t, startBrowser(t), "amy", screenshotDir(t))
	amy.signUp(url)
	idle := `document.getElementById('main').getAttribute('aria-busy') === 'false'`
	amy.waitFor(idle, "home loaded", nil)
	arm.Store(true)
	amy.clickButton("Refresh")
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		t.Fatal("the refresh never reached the server")
	}
	const post = "Posted while a load was under way"
	amy.do(chromedp.SendKeys(chromedp.CSS(`form.composer textarea`), post),
		chromedp.Click(chromedp.CSS(`form.composer button[type=submit]`)))
	shown := `[...document.querySelectorAll('.stream .activity .title')].some(e => e.textContent === ` + jsString(post) + `)`
	amy.waitFor(shown, "the post on the page", nil)
	close(release)
	amy.waitFor(idle, "the refresh answered", nil)
	if !amy.eval(shown) || amy.eval(`!document.querySelector('section.feed p.empty').hidden`) {
		amy.shot("failed")
		t.Fatal("the refresh read before the post took it off the page")
	}
	amy.checkConsole()
}

// On the page: a person reports a post from its card; an admin (named as
// the operator's command does) finds it in the Moderation queue with what
// it said and removes it with a reason; its author is told, reads why, and
// the post is gone from their page.
func TestModerationOnThePage(t *testing.T) {
	t.Parallel() // a stack, a namespace and tabs of its own
	db := testenv.DB(t)
	url := startStackOn(t, db)
	browserCtx := startBrowser(t)
	shots := screenshotDir(t)
	ada, bob := newTab(t, browserCtx, "ada", shots), newTab(t, browserCtx, "bob", shots)
	ada.signUp(url)
	bob.signUp(url)
	const spam = "Cheap pills, click here"
	bob.do(chromedp.SendKeys(chromedp.CSS(`form.composer textarea`), spam),
		chromedp.Click(chromedp.CSS(`form.composer button[type=submit]`)))
	bob.waitFor(`[...document.querySelectorAll('.stream .activity .title')].some(e => e.textContent === `+jsString(spam)+`)`, "bob's post", nil)

	ctx := context.Background()
	found, err := accounts.UserIDsByName(ctx, db, []string{"ada"})
	if err != nil {
		t.Fatal(err)
	}
	if err := moderation.SetRole(ctx, db, ids.New(), found["ada"], accounts.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	ada.do(chromedp.Navigate(url+"/#/public"), chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#mod-link`)))
	ada.waitFor(`!!document.querySelector('button[aria-label="Report this post"]')`, "bob's post in public", nil)
	ada.do(chromedp.Click(chromedp.CSS(`button[aria-label="Report this post"]`)), chromedp.WaitVisible(chromedp.CSS(`form.report select[name=category]`)),
		chromedp.SetValue(chromedp.CSS(`form.report select[name=category]`), "spam"),
		chromedp.SendKeys(chromedp.CSS(`form.report textarea[name=comment]`), "selling pills"))
	ada.checkLabels()
	ada.shot("report")
	ada.do(chromedp.Click(chromedp.CSS(`form.report button[type=submit]`)))
	ada.waitFor(`!!document.querySelector('main')?.textContent.includes('moderators will look at it')`, "the report filed", nil)

	ada.do(chromedp.Click(chromedp.CSS(`#mod-link`)), chromedp.WaitVisible(chromedp.CSS(`.reports input[name=reason]`)))
	if got := ada.text(`.reports`); !strings.Contains(got, spam) || !strings.Contains(got, "selling pills") || !strings.Contains(got, "@bob") {
		t.Errorf("the queue shows %q", got)
	}
	ada.checkLabels()
	ada.shot("queue")
	ada.do(chromedp.SendKeys(chromedp.CSS(`.reports input[name=reason]`), "no spam here"))
	ada.clickButton("Remove")
	ada.waitFor(`!!document.querySelector('.reports')?.textContent.includes('Posts removed: report resolved')`, "the removal", nil)
	ada.waitFor(`!!document.querySelector('ol[aria-label="Audit log"]')?.textContent.includes('no spam here')`, "the audit log", nil)

	bob.waitFor(`document.getElementById('badge').textContent === '1'`, "a badge of 1",
		func() { bob.do(chromedp.Click(chromedp.CSS(`#me-link`))) })
	bob.do(chromedp.Click(chromedp.CSS(`#notif-link`)), chromedp.WaitVisible(chromedp.CSS(`.notes li.unread`)))
	if got := bob.text(`.notes`); !strings.Contains(got, "Moderation acted on your account") {
		t.Errorf("bob's notifications %q", got)
	}
	bob.do(chromedp.Click(chromedp.CSS(`.notes a[href="#/notices"]`)))
	bob.waitFor(`!!document.querySelector('ol[aria-label="Notices"]')?.textContent.includes('Posts removed: no spam here')`, "bob's notice", nil)
	bob.shot("notice")
	bob.do(chromedp.Click(chromedp.CSS(`#me-link`)), chromedp.WaitVisible(chromedp.CSS(`section.feed`)))
	bob.waitFor(`!!document.querySelector('main')?.textContent.includes('No posts yet') && !document.querySelector('main').textContent.includes(`+jsString(spam)+`)`,
		"bob's page without the post", nil)
	ada.checkConsole()
	bob.checkConsole()
}

// twoPeople starts the stack and a browser with two tabs, each signed up
// as its name.
func twoPeople(t *testing.T, a, b string) (url string, ta, tb *tab) {
	t.Helper()
	url = startStack(t)
	browserCtx := startBrowser(t)
	shots := screenshotDir(t)
	ta, tb = newTab(t, browserCtx, a, shots), newTab(t, browserCtx, b, shots)
	ta.signUp(url)
	tb.signUp(url)
	return url, ta, tb
}

// createGroup makes a group with the form on the groups page.
func (b *tab) createGroup(title, description, policy string) {
	b.t.Helper()
	actions := []chromedp.Action[chromedp.Void]{
		chromedp.Click(chromedp.CSS(`#nav a[data-nav=groups]`)),
		// The list of one's groups fills in above the form and moves it:
		// a click before then can land where the button was.
		chromedp.WaitVisible(chromedp.CSS(`main section.card h2`)),
		chromedp.WaitVisible(chromedp.CSS(`input[name=title]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=title]`), title),
		chromedp.SetValue(chromedp.CSS(`select[name=joinPolicy]`), policy),
	}
	if description != "" {
		actions = append(actions, chromedp.SendKeys(chromedp.CSS(`textarea[name=description]`), description))
	}
	b.do(append(actions, chromedp.Click(chromedp.CSS(`main form button[type=submit]`)))...)
}

func startStack(t *testing.T) string {
	t.Helper()
	return startStackOn(t, testenv.DB(t))
}

// startStackOn is startStack on db.
func startStackOn(t *testing.T, db *store.DB) string {
	t.Helper()
	return startStackWith(t, db, nil)
}

// startStackWith is startStackOn whose page may be called from the
// origins listed (CORS).
func startStackWith(t *testing.T, db *store.DB, origins []string) string {
	t.Helper()
	return startStackWrapped(t, db, origins, func(h http.Handler) http.Handler { return h })
}

// startStackWrapped is startStackWith with the API's handler wrapped by
// wrap, inside the wrapper that answers slowPath late.
func startStackWrapped(t *testing.T, db *store.DB, origins []string, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	root, err := testenv.RepoFile("")
	if err != nil {
		t.Fatal(err)
	}
	st, err := localstack.Start(context.Background(), localstack.Options{
		Config: app.Config{CORSOrigins: origins, BcryptCost: bcrypt.MinCost, BackfillMax: 1000},
		Dir:    root, DB: db, Project: testenv.Project, Location: "test", DispatchDeadline: time.Minute,
		Logger: logging.New(os.Stderr, slog.LevelWarn, testenv.Project),
		Wrap: func(h http.Handler) http.Handler {
			h = wrap(h)
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == slowPath {
					time.Sleep(time.Second)
				}
				h.ServeHTTP(w, r)
			})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st.URL
}

// startBrowser starts headless Chromium with a phone's window.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	browser.Lock()
	defer browser.Unlock()
	if browser.ctx == nil {
		chromium := findChromium(t)
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(chromium),
			chromedp.NoSandbox, // CI runs as root
			chromedp.Flag("disable-gpu", true),
			chromedp.Flag("disable-quic", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.WindowSize(390, 844), // a phone
		)...)
		ctx, cancel := chromedp.NewContext(alloc)
		if err := chromedp.Do(ctx); err != nil { // starts the browser
			cancel()
			cancelAlloc()
			t.Fatalf("start %s: %v", chromium, err)
		}
		browser.ctx, browser.stop = ctx, func() { cancel(); cancelAlloc() }
	}
	return browser.ctx
}

// browser is the run's headless Chromium, started by the first test that
// needs it and stopped by TestMain. Each tab is a browser context of its
// own (newTab), so tests that share it share no storage or session.
var browser struct {
	sync.Mutex
	ctx  context.Context
	stop func()
}

// stopBrowser stops the run's browser, if it started.
func stopBrowser() {
	browser.Lock()
	defer browser.Unlock()
	if browser.stop != nil {
		browser.stop()
	}
}

func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("headless Chromium not found: install Debian's chromium and chromium-driver packages (.ci/run does)")
	return ""
}

var clearShots sync.Once

// screenshotDir makes the test's folder of screenshots, emptied of any
// earlier run's.
func screenshotDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("SOCIALSTREAM_E2E_DIR")
	if root == "" {
		root = filepath.Join(os.TempDir(), "socialstream-e2e")
	}
	clearShots.Do(func() {
		if err := os.RemoveAll(root); err != nil {
			t.Fatal(err)
		}
	})
	dir := filepath.Join(root, t.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots: %s", dir)
	return dir
}

// tab is one person's browser tab, in a browser context of its own (its
// own localStorage, so its own session).
type tab struct {
	t     *testing.T
	ctx   context.Context
	name  string
	shots string

	mu      sync.Mutex
	console []string // exceptions and security messages
}

func newTab(t *testing.T, browser context.Context, name, shots string) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	b := &tab{t: t, ctx: ctx, name: name, shots: shots}
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			// Network entries are the API's expected 4xx answers; anything
			// thrown, logged as an error by the page or refused by the
			// content security policy is a fault.
			if m.IsException() || m.Source == "security" || (m.Type == chromedp.ConsoleError && m.Source == "") {
				b.mu.Lock()
				b.console = append(b.console, m.String())
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// signUp makes an account named as the tab, with the mouse.
func (b *tab) signUp(url string) {
	b.t.Helper()
	b.do(
		chromedp.Navigate(url+"/#/signup"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=username]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), b.name),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "password-"+b.name),
		chromedp.Click(chromedp.CSS(`form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`form.composer`)),
	)
}

// clickButton clicks the first button in main whose text is text.
func (b *tab) clickButton(text string) {
	b.t.Helper()
	if !b.eval(`(() => { const el = [...document.querySelectorAll('main button')].find(e => e.textContent === ` + jsString(text) + `);
		if (!el) return false; el.click(); return true; })()`) {
		b.shot("failed")
		b.t.Fatalf("%s: no button %q", b.name, text)
	}
}

// do runs actions, each step given 20 seconds.
func (b *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.shot("failed")
		b.t.Fatalf("%s: %v", b.name, err)
	}
}

func (b *tab) eval(expr string) bool {
	b.t.Helper()
	return evaluate[bool](b, expr)
}

func (b *tab) evalString(expr string) string {
	b.t.Helper()
	return evaluate[string](b, expr)
}

// evaluate runs a JavaScript expression in the tab and returns its value.
func evaluate[T any](b *tab, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("%s: evaluate %s: %v", b.name, expr, err)
	}
	return v
}

func (b *tab) text(sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("%s: text of %s: %v", b.name, sel, err)
	}
	return strings.Join(strings.Fields(v), " ")
}

func (b *tab) attr(sel, name string) string {
	b.t.Helper()
	return b.evalString(fmt.Sprintf(`document.querySelector(%s).getAttribute(%s) || ''`, jsString(sel), jsString(name)))
}

// waitFor waits up to 30 seconds for expr to be true, calling nudge (if
// any) every two seconds meanwhile.
func (b *tab) waitFor(expr, what string, nudge func()) {
	b.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	last := time.Now()
	for !b.eval(expr) {
		if time.Now().After(deadline) {
			b.shot("failed")
			b.t.Fatalf("%s: no %s after 30s", b.name, what)
		}
		if nudge != nil && time.Since(last) > 2*time.Second {
			nudge()
			last = time.Now()
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkLabels checks that every form control has a label.
func (b *tab) checkLabels() {
	b.t.Helper()
	if unlabelled := b.evalString(`[...document.querySelectorAll('input:not([type=hidden]),textarea,select')]
		.filter(e => !e.labels || e.labels.length === 0).map(e => e.name).join(',')`); unlabelled != "" {
		b.t.Errorf("%s: controls without a label: %s", b.name, unlabelled)
	}
}

// checkFitsWidth checks that nothing scrolls sideways at the phone width.
func (b *tab) checkFitsWidth() {
	b.t.Helper()
	if !b.eval(`document.documentElement.scrollWidth <= window.innerWidth`) {
		b.t.Errorf("%s: the page is wider than the %s-pixel window", b.name, b.evalString(`String(window.innerWidth)`))
	}
}

func (b *tab) checkConsole() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.console {
		b.t.Errorf("%s: console: %s", b.name, m)
	}
}

var shotSeq struct {
	sync.Mutex
	n int
}

// shot keeps a screenshot of the whole page, after checking that no empty
// value shows on it as text.
func (b *tab) shot(step string) {
	b.t.Helper()
	if bad := b.evalString(`((document.body ? document.body.innerText : '').match(/null|undefined|NaN|\[object Object\]/) || [''])[0]`); bad != "" && step != "failed" {
		b.t.Errorf("%s at %s: the page shows %q", b.name, step, bad)
	}
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Errorf("%s: screenshot %s: %v", b.name, step, err)
		return
	}
	shotSeq.Lock()
	shotSeq.n++
	name := fmt.Sprintf("%02d-%s-%s.png", shotSeq.n, b.name, step)
	shotSeq.Unlock()
	if err := os.WriteFile(filepath.Join(b.shots, name), png, 0o644); err != nil {
		b.t.Error(err)
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	return fmt.Sprintf("%q", s) // Go's quoting is valid JavaScript for these strings
}

// TestHashtagsAndRepostsOnThePage follows a #tag from a post's link: the
// tag's page lists its posts, its follow is the server's, and a
// stranger's next post with the tag comes to the follower's home feed.
// Then a post is reposted from the tag's page: counted, and in the
// reposter's home under a line that says so.
func TestHashtagsAndRepostsOnThePage(t *testing.T) {
	t.Parallel() // a stack, a namespace and tabs of its own
	_, jo, kit := twoPeople(t, "joe", "kit")
	jo.do(
		chromedp.SendKeys(chromedp.CSS(`form.composer textarea`), "learning #Golang today"),
		chromedp.Click(chromedp.CSS(`form.composer button[type=submit]`)),
	)
	jo.waitFor(`!!document.querySelector('.stream .activity .title a.tag[href="#/tag/Golang"]')`, "the tag as a link", nil)
	jo.do(chromedp.Click(chromedp.CSS(`.stream .activity .title a.tag`)))
	jo.waitFor(`document.querySelector('main h1')?.textContent === '#golang' && !!document.querySelector('button[aria-label="Follow #golang"]')`,
		"the tag's page, folded, with a follow button", nil)
	jo.waitFor(`[...document.querySelectorAll('.stream .activity .title')].some(e => e.textContent === 'learning #Golang today')`,
		"the post in the tag's feed", nil)
	jo.checkLabels()
	jo.shot("tag")
	jo.do(
		chromedp.Click(chromedp.CSS(`button[aria-label="Follow #golang"]`)),
		chromedp.WaitVisible(chromedp.CSS(`button[aria-label="Unfollow #golang"]`)),
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`button[aria-label="Unfollow #golang"]`)),
	)
	jo.shot("tag-followed")

	kit.do(
		chromedp.SendKeys(chromedp.CSS(`form.composer textarea`), "more #GOLANG from kit"),
		chromedp.Click(chromedp.CSS(`form.composer button[type=submit]`)),
	)
	kit.waitFor(`[...document.querySelectorAll('.stream .activity .title')].some(e => e.textContent === 'more #GOLANG from kit')`,
		"kit's post in her home", nil)
	jo.do(chromedp.Click(chromedp.CSS(`#nav a[data-nav="home"]`)))
	jo.waitFor(`[...document.querySelectorAll('.stream .activity .title')].some(e => e.textContent === 'more #GOLANG from kit')`,
		"kit's tagged post in joe's home, though joe does not follow kit",
		func() { jo.do(chromedp.Reload()) })
	jo.shot("tag-at-home")

	// Kit reposts joe's post from the tag's page: her home shows it under
	// "kit reposted", counted.
	kit.do(chromedp.Navigate(strings.Split(kit.evalString(`location.href`), "#")[0] + "#/tag/golang"))
	kit.waitFor(`[...document.querySelectorAll('.stream .activity')].some(e => e.querySelector('.title')?.textContent === 'learning #Golang today')`,
		"joe's post on the tag's page", nil)
	kit.eval(`(() => { const art = [...document.querySelectorAll('.stream .activity')].find(e => e.querySelector('.title')?.textContent === 'learning #Golang today');
		[...art.querySelectorAll('button')].find(b => b.textContent.startsWith('↻ Repost')).click(); return true })()`)
	kit.waitFor(`[...document.querySelectorAll('.stream .activity button')].some(b => b.textContent === '↻ Reposted (1)' && b.getAttribute('aria-pressed') === 'true')`,
		"the repost counted", nil)
	kit.do(chromedp.Click(chromedp.CSS(`#nav a[data-nav="home"]`)))
	kit.waitFor(`[...document.querySelectorAll('.stream .activity')].some(e => e.querySelector('.reposted')?.textContent === '↻ kit reposted' && e.querySelector('.title')?.textContent === 'learning #Golang today')`,
		"the repost in kit's home", nil)
	kit.shot("reposted")
	// A post for the mentioned alone: kit, who follows nobody, has it at
	// home, marked so.
	jo.do(
		chromedp.Click(chromedp.CSS(`#nav a[data-nav="home"]`)),
		chromedp.WaitVisible(chromedp.CSS(`form.composer select[name=visibility]`)),
		chromedp.SetValue(chromedp.CSS(`form.composer select[name=visibility]`), "mentioned"),
		chromedp.SendKeys(chromedp.CSS(`form.composer textarea`), "just for @kit"),
		chromedp.Click(chromedp.CSS(`form.composer button[type=submit]`)),
	)
	jo.checkLabels()
	kit.waitFor(`[...document.querySelectorAll('.stream .activity')].some(e => e.querySelector('.title')?.textContent === 'just for @kit' && e.querySelector('.visibility')?.textContent === ' · mentioned only')`,
		"joe's post for kit in her home, marked", func() { kit.do(chromedp.Reload()) })
	kit.shot("mentioned-only")
	// Joe is told, on one line per group.
	jo.do(chromedp.Click(chromedp.CSS(`#notif-link`)), chromedp.WaitVisible(chromedp.CSS(`.notes li.unread`)))
	if got := jo.text(`.notes`); !strings.Contains(got, "kit reposted your post") {
		t.Errorf("joe's notifications %q lack the repost", got)
	}
	jo.checkConsole()
	kit.checkConsole()
}

// TestPicturesOnThePage: a person attaches a picture to a post with its
// alt text; the post shows it, loaded through its link, with that alt
// text, to another person too.
func TestPicturesOnThePage(t *testing.T) {
	t.Parallel() // a stack, a namespace and tabs of its own
	url, ann, bob := twoPeople(t, "ann", "bob")
	file := filepath.Join(t.TempDir(), "sunset.png")
	img := image.NewNRGBA(image.Rect(0, 0, 120, 80))
	for i := range img.Pix {
		img.Pix[i] = byte(i)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	const alt = "A sunset over the harbour"
	ann.do(chromedp.SetUploadFiles(chromedp.CSS(`form.composer input[type=file]`), []string{file}),
		chromedp.WaitVisible(chromedp.CSS(`form.composer input[name=alt]`)))
	ann.checkLabels()
	ann.do(chromedp.SendKeys(chromedp.CSS(`form.composer input[name=alt]`), alt),
		chromedp.SendKeys(chromedp.CSS(`form.composer textarea`), "Evening walk"),
		chromedp.Click(chromedp.CSS(`form.composer button[type=submit]`)))
	loaded := `(() => { const i = document.querySelector('.stream .activity .pictures img');
		return !!i && i.complete && i.naturalWidth === 120 && i.alt === ` + jsString(alt) + `; })()`
	ann.waitFor(loaded, "ann's post with its picture", nil)
	if ann.eval(`document.querySelectorAll('form.composer .chosen li').length !== 0`) {
		t.Error("the composer still holds the picture after posting")
	}
	ann.shot("picture-posted")
	bob.do(chromedp.Navigate(url + "/#/public"))
	bob.waitFor(loaded, "ann's picture in public", func() { bob.do(chromedp.Reload()) })
	bob.shot("picture-seen")

	// Ann writes her profile, with the same picture as her avatar; bob
	// sees it on her page and beside her post.
	ann.do(chromedp.Click(chromedp.CSS(`#me-link`)), chromedp.WaitVisible(chromedp.CSS(`form.profile-editor textarea[name=note]`)))
	ann.checkLabels()
	ann.do(chromedp.SendKeys(chromedp.CSS(`form.profile-editor textarea[name=note]`), "I walk by the sea."),
		chromedp.SendKeys(chromedp.CSS(`form.profile-editor input[name=field-name-0]`), "town"),
		chromedp.SendKeys(chromedp.CSS(`form.profile-editor input[name=field-value-0]`), "Porto"),
		chromedp.SetUploadFiles(chromedp.CSS(`form.profile-editor input[name=avatar]`), []string{file}),
		chromedp.Click(chromedp.CSS(`form.profile-editor button[type=submit]`)))
	profiled := `(() => { const p = document.querySelector('.person .profile'); const a = p && p.querySelector('img.avatar');
		return !!a && a.complete && a.naturalWidth > 0 && p.querySelector('.note')?.textContent === 'I walk by the sea.' &&
			p.querySelector('dl.fields dd')?.textContent === 'Porto'; })()`
	ann.waitFor(profiled, "ann's profile on her page", nil)
	ann.shot("profile")
	bob.do(chromedp.Navigate(url + "/#/people/ann"))
	bob.waitFor(profiled, "ann's profile on her page, to bob", nil)
	bob.waitFor(`(() => { const a = document.querySelector('.stream .activity header img.avatar'); return !!a && a.complete && a.naturalWidth > 0; })()`,
		"ann's avatar beside her post", nil)
	bob.shot("profile-seen")
	ann.checkConsole()
	bob.checkConsole()
}

// A poll on the page: bob sees ann's, with its options, votes in it, and
// sees it counted and his vote marked; he may not vote again.
func TestPollOnThePage(t *testing.T) {
	t.Parallel() // a stack, a namespace and tabs of its own
	url, ann, bob := twoPeople(t, "ann", "bob")
	// Ann's poll, made through the API with her page's token (the
	// composer makes none yet).
	ann.eval(`(fetch('/social/rest/activities/@me/@self', {method: 'POST', headers: {'Content-Type': 'application/json',
		Authorization: 'Bearer ' + localStorage.getItem('socialstream.token')},
		body: JSON.stringify({title: 'Tea or coffee?', poll: {options: ['tea', 'coffee'], expiresIn: 86400}})}), true)`)
	bob.do(chromedp.Navigate(url + "/#/public"))
	shown := `(() => { const f = document.querySelector('.stream .activity form.poll');
		return !!f && f.querySelectorAll('input[type=radio]').length === 2 && !!f.querySelector('button[type=submit]'); })()`
	bob.waitFor(shown, "ann's poll in public", func() { bob.do(chromedp.Reload()) })
	bob.checkLabels()
	bob.shot("poll-seen")
	bob.do(chromedp.Click(chromedp.CSS(`.stream .activity form.poll input[value="1"]`)),
		chromedp.Click(chromedp.CSS(`.stream .activity form.poll button[type=submit]`)))
	voted := `(() => { const f = document.querySelector('.stream .activity form.poll');
		return !!f && !f.querySelector('button[type=submit]') && f.querySelector('input[value="1"]').checked &&
			f.querySelector('input[value="1"]').disabled && /you voted/.test(f.querySelector('.poll-status').textContent) &&
			f.querySelectorAll('.option .votes')[1]?.textContent === ' · 1'; })()`
	bob.waitFor(voted, "bob's vote counted", nil)
	bob.shot("poll-voted")
}
