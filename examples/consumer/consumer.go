// Package consumer is a small service that calls the four APIs apistack
// stands in for, as a user's service would: it lists the PAM groups of its
// team and the menu items of its restaurant (following every page), faxes a
// document and learns of its delivery from the signed webhook, and sets a
// lifecycle rule on a bucket. Its tests (consumer_test.go) run it against
// apistacktest, the whole stack in-process.
package consumer

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/apistack/apistack/clients/fax"
	"github.com/apistack/apistack/clients/pam"
	"github.com/apistack/apistack/clients/restaurant"
	"github.com/apistack/apistack/clients/storage"
)

// Config is what the service is told.
type Config struct {
	PAM        pam.Config
	Restaurant restaurant.Config
	Storage    storage.Config
	Fax        fax.Config
	// FaxConnectionID and FaxFrom are the fax application and number to
	// send from.
	FaxConnectionID, FaxFrom string
	// WebhookPublicKey verifies the fax webhooks.
	WebhookPublicKey ed25519.PublicKey
	// Now is the clock webhook timestamps are judged by (nil: time.Now).
	Now func() time.Time
}

// Service is the service.
type Service struct {
	cfg        Config
	pam        *pam.Client
	restaurant *restaurant.Client
	storage    *storage.Client
	fax        *fax.Client
	webhooks   http.Handler

	mu        sync.Mutex
	delivered map[string]chan struct{}
	outcome   map[string]string
}

// New returns the service.
func New(cfg Config) (*Service, error) {
	s := &Service{cfg: cfg, delivered: map[string]chan struct{}{}, outcome: map[string]string{}}
	var err error
	if s.pam, err = pam.New(cfg.PAM); err != nil {
		return nil, err
	}
	if s.restaurant, err = restaurant.New(cfg.Restaurant); err != nil {
		return nil, err
	}
	if s.storage, err = storage.New(cfg.Storage); err != nil {
		return nil, err
	}
	if s.fax, err = fax.New(cfg.Fax); err != nil {
		return nil, err
	}
	opts := []fax.WebhookOption{}
	if cfg.Now != nil {
		opts = append(opts, fax.WithClock(cfg.Now))
	}
	s.webhooks, err = fax.NewWebhookHandler(cfg.WebhookPublicKey, s.onFaxEvent, opts...)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// GroupNames lists every group of the team, count per page.
func (s *Service) GroupNames(ctx context.Context, count int) ([]string, error) {
	var names []string
	for g, err := range s.pam.ListGroups(ctx, &pam.ListGroupsOptions{PageSize: count}) {
		if err != nil {
			return nil, fmt.Errorf("list groups: %w", err)
		}
		names = append(names, g.Name)
	}
	return names, nil
}

// MenuItemNames lists every menu item of the restaurant.
func (s *Service) MenuItemNames(ctx context.Context) ([]string, error) {
	var names []string
	for item, err := range s.restaurant.ListMenuItems(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list menu items: %w", err)
		}
		names = append(names, item.Name)
	}
	return names, nil
}

// SendFax faxes the document at mediaURL to to and returns the fax's id.
func (s *Service) SendFax(ctx context.Context, to, mediaURL string) (string, error) {
	f, err := s.fax.SendFax(ctx, fax.SendFaxParams{ConnectionID: s.cfg.FaxConnectionID, To: to, From: s.cfg.FaxFrom, MediaURL: mediaURL})
	if err != nil {
		return "", fmt.Errorf("send a fax: %w", err)
	}
	return f.ID.String(), nil
}

// WebhookHandler receives the fax webhooks.
func (s *Service) WebhookHandler() http.Handler { return s.webhooks }

// onFaxEvent notes a fax's final outcome. Deliveries come at least once
// and possibly out of order: only a final event counts, once.
func (s *Service) onFaxEvent(_ context.Context, e fax.Event) error {
	if e.Type != "fax.delivered" && e.Type != "fax.failed" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, done := s.outcome[e.FaxID]; done {
		return nil
	}
	s.outcome[e.FaxID] = e.Type
	close(s.doneLocked(e.FaxID))
	return nil
}

func (s *Service) doneLocked(id string) chan struct{} {
	ch, ok := s.delivered[id]
	if !ok {
		ch = make(chan struct{})
		s.delivered[id] = ch
	}
	return ch
}

// ErrFaxFailed is returned by WaitForFax for a fax that failed.
var ErrFaxFailed = errors.New("the fax failed")

// WaitForFax waits for the final webhook of fax id.
func (s *Service) WaitForFax(ctx context.Context, id string) error {
	s.mu.Lock()
	ch := s.doneLocked(id)
	s.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		return fmt.Errorf("wait for fax %s: %w", id, ctx.Err())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.outcome[id] == "fax.failed" {
		return ErrFaxFailed
	}
	return nil
}

// ExpireLogs makes the objects under logs/ of bucket expire after days.
func (s *Service) ExpireLogs(ctx context.Context, bucket string, days int32) error {
	if err := s.storage.PutLifecycle(ctx, bucket, storage.Configuration(storage.ExpireAfterDays("expire-logs", "logs/", days))); err != nil {
		return fmt.Errorf("put the lifecycle rule: %w", err)
	}
	return nil
}
