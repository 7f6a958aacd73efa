package replicas

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sandboxCluster starts three replicas whose fax work may reach the
// sandboxes' inboxes on the admin ports, with short leases so a crash is recovered from in
// seconds.
func sandboxCluster(t *testing.T) (*cluster, []*replica) {
	c := newCluster(t)
	rs := c.start(t, 3, "--fax-allow-private-destinations", "--fax-media-timeout", "2s", "--fax-webhook-timeout", "2s",
		"--fax-lease", "5s", "--pam-rate-limit", "1000000")
	return c, rs
}

// replicaSandbox is a sandbox made through one replica's admin port: its
// faxes' events go to its inbox on that replica's admin port.
type replicaSandbox struct {
	ID, Token string
	fax       faxTenant
}

func newSandbox(t *testing.T, c *cluster, on *replica) replicaSandbox {
	t.Helper()
	var sb struct {
		ID          string `json:"id"`
		Token       string `json:"token"`
		Credentials struct {
			Fax struct {
				APIKey       string `json:"api_key"`
				ConnectionID string `json:"connection_id"`
				From         string `json:"from"`
			} `json:"fax"`
		} `json:"credentials"`
	}
	mustCall(t, direct(on, "admin"), http.MethodPost, "http://admin/sandboxes", c.adminToken,
		map[string]string{"clock": "frozen"}, http.StatusCreated, &sb)
	f := sb.Credentials.Fax
	return replicaSandbox{ID: sb.ID, Token: sb.Token, fax: faxTenant{apiKey: f.APIKey, connectionID: f.ConnectionID, from: f.From,
		mediaURL: "http://" + on.addr["admin"] + "/fax/sample.pdf"}}
}

// faxStatus reads a fax's status through c.
func faxStatus(t *testing.T, c *http.Client, sb replicaSandbox, id string) string {
	t.Helper()
	var f struct {
		Data struct {
			Status string `json:"status"`
		} `json:"data"`
	}
	mustCall(t, c, http.MethodGet, "http://fax/v2/faxes/"+id, sb.fax.apiKey, nil, http.StatusOK, &f)
	return f.Data.Status
}

// inbox lists the event types sb's inbox acknowledged, by fax id, as its
// webhook log tells them (admin is a client of any replica's admin port:
// the log is in the database).
func inbox(t *testing.T, admin *http.Client, sb replicaSandbox) map[string][]string {
	t.Helper()
	var log struct {
		Data []struct {
			Succeeded bool `json:"succeeded"`
			Event     struct {
				Type  string `json:"type"`
				FaxID string `json:"fax_id"`
			} `json:"event"`
		} `json:"data"`
	}
	mustCall(t, admin, http.MethodGet, "http://admin/sandboxes/"+sb.ID+"/webhooks?limit=1000", sb.Token, nil, http.StatusOK, &log)
	out := map[string][]string{}
	for _, a := range log.Data {
		if a.Succeeded {
			out[a.Event.FaxID] = append(out[a.Event.FaxID], a.Event.Type)
		}
	}
	return out
}

// TestReplicas_SandboxClockAcrossReplicas: sandboxes created on one replica,
// advanced through another, read through a third: the advance answers once
// the fax is delivered with every event, and the other sandbox stays queued.
func TestReplicas_SandboxClockAcrossReplicas(t *testing.T) {
	c, rs := sandboxCluster(t)
	a := newSandbox(t, c, rs[2])
	b := newSandbox(t, c, rs[2])
	faxA, _, err := a.fax.send(context.Background(), direct(rs[0], "fax"))
	require.NoError(t, err)
	faxB, _, err := b.fax.send(context.Background(), direct(rs[1], "fax"))
	require.NoError(t, err)

	var clk struct {
		Now time.Time `json:"now"`
	}
	mustCall(t, direct(rs[0], "admin"), http.MethodGet, "http://admin/sandboxes/"+a.ID+"/clock", a.Token, nil, http.StatusOK, &clk)
	before := clk.Now
	mustCall(t, direct(rs[1], "admin"), http.MethodPost, "http://admin/sandboxes/"+a.ID+"/clock", a.Token,
		map[string]string{"advance": "10m"}, http.StatusOK, &clk)
	assert.Equal(t, before.Add(10*time.Minute), clk.Now)

	// Read through the third replica: delivered, every event in the inbox of
	// the replica that made the sandbox; B untouched.
	assert.Equal(t, "delivered", faxStatus(t, direct(rs[0], "fax"), a, faxA))
	assert.Equal(t, faxSteps, inbox(t, direct(rs[2], "admin"), a)[faxA])
	assert.Equal(t, "queued", faxStatus(t, direct(rs[0], "fax"), b, faxB))
	mustCall(t, direct(rs[0], "admin"), http.MethodGet, "http://admin/sandboxes/"+a.ID+"/clock", a.Token, nil, http.StatusOK, &clk)
	assert.Equal(t, before.Add(10*time.Minute), clk.Now, "every replica tells the new time")
	mustCall(t, direct(rs[2], "admin"), http.MethodGet, "http://admin/sandboxes/"+b.ID+"/clock", b.Token, nil, http.StatusOK, &clk)
	assert.WithinDuration(t, before, clk.Now, 5*time.Second, "B's clock did not move")

	// The journal, read through the first replica, has A's send.
	var journal struct {
		Data []struct {
			Operation string `json:"operation"`
		} `json:"data"`
	}
	mustCall(t, direct(rs[0], "admin"), http.MethodGet, "http://admin/sandboxes/"+a.ID+"/requests?api=fax&operation=SendFax", a.Token,
		nil, http.StatusOK, &journal)
	assert.Len(t, journal.Data, 1)
}

// TestReplicas_SandboxAdvanceSurvivesAKilledReplica: the replica doing an
// advance is SIGKILLed while it runs the due work; the survivors finish it
// (once the advance's and the fax claims' leases end): every fax delivered,
// every event in the inbox.
func TestReplicas_SandboxAdvanceSurvivesAKilledReplica(t *testing.T) {
	c, rs := sandboxCluster(t)
	sb := newSandbox(t, c, rs[2])
	const n = 20
	ids := sb.fax.sendMany(t, direct(rs[0], "fax"), n, 4)

	done := make(chan error, 1)
	go func() {
		_, _, err := call(context.Background(), direct(rs[1], "admin"), http.MethodPost, "http://admin/sandboxes/"+sb.ID+"/clock",
			sb.Token, map[string]string{"advance": "10m"})
		done <- err
	}()
	// Kill it once the work began: the first fax left the queue.
	faxes := direct(rs[0], "fax")
	require.Eventually(t, func() bool { return faxStatus(t, faxes, sb, ids[0]) != "queued" },
		30*time.Second, 2*time.Millisecond, "the advance never began")
	rs[1].kill()
	err := <-done
	if err == nil {
		t.Log("the advance answered before the kill: the survivors had nothing left to do")
	}

	// The new time was committed first: every replica left tells it, and
	// the work is finished by the survivors.
	require.Eventually(t, func() bool {
		for _, id := range ids {
			if faxStatus(t, faxes, sb, id) != "delivered" {
				return false
			}
		}
		return true
	}, time.Minute, 50*time.Millisecond, "the faxes were not all delivered after the crash")
	admin := direct(rs[2], "admin")
	require.Eventually(t, func() bool {
		got := inbox(t, admin, sb)
		for _, id := range ids {
			types := got[id]
			if len(types) < len(faxSteps) || types[len(types)-1] != "fax.delivered" {
				return false
			}
		}
		return true
	}, time.Minute, 50*time.Millisecond, "not every event reached the inbox after the crash")
}
