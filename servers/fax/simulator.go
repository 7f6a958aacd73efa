package fax

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"github.com/apistack/apistack/gen/faxapi"
	"github.com/apistack/apistack/servers/clock"
	"github.com/apistack/apistack/servers/fax/internal/pdflimit"
	"github.com/apistack/apistack/servers/internal/cache"
)

// Limits of the documents the simulator accepts.
const (
	// MaxMediaBytes caps a fax document's download.
	MaxMediaBytes = 50 << 20
	// MaxPages is the largest page count a fax may have.
	MaxPages = 350
	// MaxDecodedBytes caps what decoding every stream of a fax document
	// may produce, all streams and filter stages together: a document over
	// it (a "PDF bomb") fails with file_format_invalid before the PDF
	// library decodes anything.
	MaxDecodedBytes = 32 << 20
	// MaxObjects caps the indirect objects of a fax document, in the file
	// and in its object streams.
	MaxObjects = 20_000
	// simConcurrency is how many faxes take a step at once (a step may
	// download a document).
	simConcurrency = 8
	// simPerAccount is how many of those one account may take.
	simPerAccount = 2
)

func init() {
	// pdfcpu would otherwise create a configuration directory in the user's
	// home; the defaults are all the page count needs.
	api.DisableConfigDir()
}

// Run runs the transmission simulator and the webhook sender until ctx ends.
// Work left over from a previous process (due steps, undelivered events) is
// picked up at once; so is work this replica (Config.ReplicaID) had claimed
// before a restart. Another replica's claims are taken over once their
// lease ends.
func (s *Server) Run(ctx context.Context) error {
	if !s.running.TryLock() {
		return errors.New("fax: Run is already running")
	}
	defer s.running.Unlock()
	if err := s.store.releaseClaims(ctx, s.cfg.ReplicaID); err != nil {
		return fmt.Errorf("fax: %w", err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.runSimulator(ctx) }()
	go func() { defer wg.Done(); s.runDelivery(ctx) }()
	wg.Wait()
	return nil
}

// runSimulator claims due steps while it has free workers and takes them,
// then sleeps until the next one is due or a commit or a finished step
// wakes it. Claims make the steps safe across replicas sharing the
// database: a fax is claimed by one replica at a time, under a lease that
// another replica takes over when the claimer dies, and a step commits only
// while its claim holds (so it is applied once even when a slow replica's
// lease ended). Accounts share the workers fairly: the claim gives an
// account at most simPerAccount faxes in flight across the replicas (a step
// may be a slow download), oldest first.
func (s *Server) runSimulator(ctx context.Context) {
	sem := make(chan struct{}, simConcurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		free := simConcurrency - len(sem) // only this loop fills sem
		var due []faxRow
		if free > 0 {
			now := s.clock.Now()
			var err error
			due, err = s.store.claimDueFaxes(ctx, s.cfg.ReplicaID, now, now.Add(s.cfg.Lease), simPerAccount, free)
			if err != nil && ctx.Err() == nil {
				s.logger.ErrorContext(ctx, "fax simulator: claim due faxes", "err", err)
			}
		}
		for _, f := range due {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := s.step(ctx, f, s.now, s.cfg.CatchUpSteps); err != nil && ctx.Err() == nil {
					s.logger.ErrorContext(ctx, "fax simulator: step", "fax_id", f.ID, "status", f.Status, "err", err)
					// Due again at once rather than after the lease.
					if err := s.store.releaseFax(ctx, f.ID, s.cfg.ReplicaID); err != nil && ctx.Err() == nil {
						s.logger.ErrorContext(ctx, "fax simulator: release", "fax_id", f.ID, "err", err)
					}
				}
				<-sem
				nudge(s.wakeSim)
			}()
		}
		// Sleep until the next step that is not yet due; due steps that
		// wait for a worker are claimed when a step finishes. Steps another
		// replica claimed and left are seen at the next look (a second at
		// most).
		wait := time.Second
		now := s.clock.Now()
		if next, err := s.store.nextDue(ctx, now); err == nil && next != nil {
			if d := next.Sub(now); d < wait {
				wait = max(d, time.Millisecond)
			}
		}
		if free > 0 && len(due) == free {
			wait = 0 // more may be due than were claimed
		}
		if !s.sleep(ctx, s.wakeSim, wait) {
			return
		}
	}
}

// sleep waits until wake is signalled or d has passed (true), or ctx ends
// (false). It is where the worker loops wait.
func (s *Server) sleep(ctx context.Context, wake <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	// In the clock's time, so a test's fake clock wakes the loop when it is
	// moved past the deadline; and in real time too, at most a second: the
	// loops also look for work no wake-up announces (claims another replica
	// left to expire, an outcome recorded late), which a test clock that
	// stands still would never bring.
	timer := clock.NewTimerAt(s.clock, s.clock.Now().Add(d))
	defer timer.Stop()
	poll := time.NewTimer(min(d, time.Second))
	defer poll.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-wake:
	case <-timer.C():
	case <-poll.C:
	}
	return true
}

// step moves f one state on and commits the change with its event. A change
// that lost a race (the fax was cancelled or deleted meanwhile, or another
// replica took the step over after this one's lease ended) is dropped.
func (s *Server) step(ctx context.Context, f faxRow, clockNow func() time.Time, catchUpSteps bool) error {
	from := faxGuard{Status: f.Status, StepsLeft: f.StepsLeft, Claim: s.cfg.ReplicaID}
	var doc []byte
	var events []string
	o := outcomeNamed(f.Outcome)
	// The next step is due StepInterval from now. With CatchUpSteps, when
	// the clock has moved past this step's due time by more than an interval
	// (a test's fake clock moved on by minutes), it is due StepInterval
	// after this step was: the steps the clock already passed are taken at
	// once, in order.
	next := func() {
		now := clockNow()
		t := now.Add(s.cfg.StepInterval)
		if catchUpSteps && f.NextStepAt != nil {
			if catchUp := f.NextStepAt.Add(s.cfg.StepInterval); !catchUp.After(now) {
				t = catchUp
			}
		}
		f.NextStepAt = &t
	}
	fail := func(reason faxapi.FaxFailureReason) {
		r := string(reason)
		f.Status, f.FailureReason, f.NextStepAt = string(faxapi.FaxStatusFailed), &r, nil
		events = append(events, eventFailed)
	}
	switch faxapi.FaxStatus(f.Status) {
	case faxapi.FaxStatusQueued:
		data, pages, reason := s.fetchDocument(ctx, f.MediaURL)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if reason != "" {
			fail(reason)
			break
		}
		f.Status, f.PageCount = string(faxapi.FaxStatusMediaProcessed), &pages
		if f.StoreMedia {
			id := uuid.NewString()
			f.MediaID, doc = &id, data
		}
		events = append(events, eventMediaProcessed)
		next()
	case faxapi.FaxStatusMediaProcessed:
		f.Status = string(faxapi.FaxStatusOriginated)
		next()
	case faxapi.FaxStatusOriginated:
		if o.failOriginating != "" {
			fail(o.failOriginating)
			break
		}
		f.Status, f.StepsLeft = string(faxapi.FaxStatusSending), o.sendingSteps
		events = append(events, eventSendingStarted)
		next()
	case faxapi.FaxStatusSending:
		if f.StepsLeft > 1 {
			f.StepsLeft--
			next()
			break
		}
		f.StepsLeft = 0
		if o.failSending != "" {
			fail(o.failSending)
			break
		}
		pages := 0
		if f.PageCount != nil {
			pages = *f.PageCount
		}
		d := callDuration(pages, o.sendingSteps)
		f.Status, f.CallDurationSecs, f.NextStepAt = string(faxapi.FaxStatusDelivered), &d, nil
		events = append(events, eventDelivered)
	case faxapi.FaxStatusReceiving:
		if f.Outcome == InboundSenderCallDropped {
			fail(faxapi.FaxFailureReasonSenderCallDropped)
			break
		}
		f.Status = string(faxapi.FaxStatusMediaProcessing)
		events = append(events, eventMediaProcessingStarted)
		next()
	case faxapi.FaxStatusMediaProcessing:
		partial := f.Outcome == InboundPartial
		f.Status, f.PartialContent, f.NextStepAt = string(faxapi.FaxStatusReceived), &partial, nil
		events = append(events, eventReceived)
	default:
		f.NextStepAt = nil // a final state has no step; never look at it again
	}
	now := clockNow()
	f.UpdatedAt = now
	out := make([]outboxEvent, 0, len(events))
	for _, typ := range events {
		ev, err := s.newEvent(f, typ, now)
		if err != nil {
			return err
		}
		out = append(out, ev)
	}
	err := s.store.updateFax(ctx, f, from, doc, out)
	if errors.Is(err, errStale) {
		return nil
	}
	if err != nil {
		return err
	}
	s.cfg.Telemetry.SimulatorStep(f.Status)
	if len(out) > 0 {
		s.wakeDelivery()
	}
	return nil
}

// callDuration is the simulated length of a call transmitting pages pages.
func callDuration(pages, sendingSteps int) int {
	return 15 + 20*pages + 30*(sendingSteps-1)
}

// fetchDocument downloads the document at url and counts its pages. A
// problem is returned as the failure_reason it causes.
func (s *Server) fetchDocument(ctx context.Context, url string) ([]byte, int, faxapi.FaxFailureReason) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.MediaTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, faxapi.FaxFailureReasonFileDownloadFailed
	}
	req.Header.Set("Accept", "application/pdf")
	resp, err := s.mediaClient.Do(req)
	if err != nil {
		// The error quotes the URL: a presigned document URL carries its
		// credentials in the query, which stays out of the logs.
		var ue *neturl.Error
		if errors.As(err, &ue) {
			err = &neturl.Error{Op: ue.Op, URL: redactURL(url), Err: ue.Err}
		}
		s.logger.InfoContext(ctx, "fax simulator: download failed", "url", redactURL(url), "err", err)
		return nil, 0, faxapi.FaxFailureReasonFileDownloadFailed
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, 0, faxapi.FaxFailureReasonFileDownloadFailed
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxMediaBytes+1))
	if err != nil || len(data) > MaxMediaBytes {
		return nil, 0, faxapi.FaxFailureReasonFileDownloadFailed
	}
	digest := sha256.Sum256(data)
	pages, counted := pageCounts.Get(string(digest[:]))
	if !counted {
		gen := pageCounts.Generation()
		pages, err = countPages(ctx, data)
		if ctx.Err() != nil {
			return nil, 0, faxapi.FaxFailureReasonFileDownloadFailed
		}
		if err != nil {
			s.logger.InfoContext(ctx, "fax simulator: document refused", "url", redactURL(url), "err", err)
			return nil, 0, faxapi.FaxFailureReasonFileFormatInvalid
		}
		pageCounts.Put(gen, string(digest[:]), pages)
	}
	if pages > MaxPages {
		return nil, 0, faxapi.FaxFailureReasonPageCountLimitExceeded
	}
	return data, pages, ""
}

// pageCounts remembers the page count of the documents read lately, by
// their SHA-256: reading a PDF is the largest part of a fax's simulated work,
// and senders fax the same documents again. Only documents that were read
// whole and accepted are remembered; a refused one is checked every time.
var pageCounts = cache.New[int](1024, time.Hour)

// CountPages checks that doc is a PDF and returns its page count. The work
// is bounded: a document whose streams decode to more than MaxDecodedBytes,
// or with more than MaxObjects objects, or encrypted, is refused before the
// PDF library reads it.
func CountPages(doc []byte) (int, error) {
	return countPages(context.Background(), doc)
}

// countPages is CountPages, stopping when ctx ends.
func countPages(ctx context.Context, doc []byte) (int, error) {
	if !bytes.HasPrefix(doc, []byte("%PDF-")) {
		return 0, errors.New("not a PDF: no %PDF- header")
	}
	if err := pdflimit.Check(ctx, doc, pdflimit.Limits{MaxDecodedBytes: MaxDecodedBytes, MaxObjects: MaxObjects, MaxRowBytes: 1 << 20}); err != nil {
		return 0, fmt.Errorf("not an acceptable PDF: %w", err)
	}
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	// The same bounds inside the library, as a second line.
	conf.Limits.MaxDecodeBytes = MaxDecodedBytes
	conf.Limits.MaxObjectCount = MaxObjects
	conf.Limits.MaxXRefEntries = MaxObjects
	conf.Limits.MaxObjectStreamCount = MaxObjects
	conf.Limits.MaxStreamBytes = MaxMediaBytes
	n, err := api.PageCount(bytes.NewReader(doc), conf)
	if err != nil {
		return 0, fmt.Errorf("not a valid PDF: %w", err)
	}
	return n, nil
}
