package notifications

import "time"

// SetNow sets the service's clock, for tests.
func (s *Service) SetNow(now func() time.Time) { s.now = now }
