package activitypub

import (
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"socialstream/internal/derrors"
	"socialstream/internal/federation"
)

// inbox is POST /inbox and /users/:id/inbox: an activity another server
// sends, read and acted on by package federation (Receive) once its
// signature holds. It answers 202 when taken; the log line says what
// came of it.
func (s *Server) inbox(c *gin.Context) {
	body, err := io.ReadAll(io.LimitReader(c.Request.Body, federation.MaxActivityBytes+1))
	if err != nil {
		s.fail(c, derrors.New(derrors.InvalidArgument, "the body could not be read"))
		return
	}
	if len(body) > federation.MaxActivityBytes {
		s.fail(c, derrors.New(derrors.TooLarge, "an activity is at most 256 KiB"))
		return
	}
	outcome, err := s.federation.Receive(c.Request.Context(), c.Request, body)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.log.InfoContext(c.Request.Context(), "inbox", "path", c.Request.URL.Path, "outcome", outcome)
	c.Status(http.StatusAccepted)
}

// application is the deployment's own actor: an Application with the
// key that signs what it fetches.
type application struct {
	Context           any       `json:"@context"`
	ID                string    `json:"id"`
	Type              string    `json:"type"`
	PreferredUsername string    `json:"preferredUsername"`
	Inbox             string    `json:"inbox"`
	Outbox            string    `json:"outbox"`
	URL               string    `json:"url"`
	PublicKey         publicKey `json:"publicKey"`
	ManuallyApproves  bool      `json:"manuallyApprovesFollowers"`
}

// instanceActor is GET /actor: the deployment's actor, whose key signs
// its fetches; to a browser, the page.
func (s *Server) instanceActor(c *gin.Context) {
	if !wantsActivity(c.Request) {
		s.answer(c, nil, s.fed.Base()+"/")
		return
	}
	key, err := s.keys.Of(c.Request.Context(), federation.InstanceKey)
	if err != nil {
		s.fail(c, err)
		return
	}
	id := s.fed.InstanceActor()
	s.answer(c, application{Context: ldContext, ID: id, Type: "Application", PreferredUsername: federation.InstanceName,
		Inbox: s.fed.Base() + federation.SharedInboxPath, Outbox: id + "/outbox", URL: s.fed.Base() + "/",
		PublicKey: publicKey{ID: id + "#main-key", Owner: id, PublicKeyPem: key.PublicPEM}, ManuallyApproves: true}, "")
}
