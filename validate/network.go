package validate

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// dialTimeout bounds one TCP connect or TLS handshake.
const dialTimeout = 5 * time.Second

// netTarget is the endpoint the network probes reach: the store's own
// host, or the HTTP proxy the SDKs would go through.
type netTarget struct {
	host, port string
	tls        bool
	serverName string
	proxy      *url.URL // non-nil: the endpoint is reached through this proxy

	addrs []string // resolved by dns, dialled by tcp
	conn  string   // the address tcp connected to
}

func newNetTarget(endpoint *url.URL) *netTarget {
	t := &netTarget{host: endpoint.Hostname(), port: endpoint.Port(), tls: endpoint.Scheme == "https", serverName: endpoint.Hostname()}
	if t.port == "" {
		t.port = "80"
		if t.tls {
			t.port = "443"
		}
	}
	if p, err := http.ProxyFromEnvironment(&http.Request{URL: endpoint}); err == nil && p != nil {
		t.proxy = p
		t.host, t.port = p.Hostname(), p.Port()
		if t.port == "" {
			t.port = "80"
			if p.Scheme == "https" {
				t.port = "443"
			}
		}
	}
	return t
}

func (t *netTarget) via() string {
	if t.proxy == nil {
		return ""
	}
	return " (the HTTP proxy " + t.proxy.Host + ")"
}

func (t *netTarget) dns(ctx context.Context) outcome {
	if ip := net.ParseIP(t.host); ip != nil {
		t.addrs = []string{ip.String()}
		return outcome{status: Pass, message: "literal address, no lookup" + t.via(), address: t.host}
	}
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, t.host)
	if err != nil {
		return outcome{status: Fail, message: "cannot resolve " + t.host + t.via(), address: t.host, err: err}
	}
	var shown []string
	for _, ip := range ips {
		t.addrs = append(t.addrs, ip.IP.String())
		if len(shown) < 4 {
			shown = append(shown, ip.IP.String())
		}
	}
	more := ""
	if len(ips) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(ips)-len(shown))
	}
	return outcome{status: Pass, message: t.host + t.via() + " is " + strings.Join(shown, ", ") + more, address: t.host}
}

func (t *netTarget) tcp(ctx context.Context) outcome {
	var tried []string
	var last error
	for _, a := range t.addrs {
		addr := net.JoinHostPort(a, t.port)
		tried = append(tried, addr)
		d := net.Dialer{Timeout: dialTimeout}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			t.conn = addr
			return outcome{status: Pass, message: "connected to " + addr + t.via(), address: addr}
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	if last == nil {
		last = errors.New("no address to connect to")
	}
	return outcome{status: Fail, message: "cannot connect to " + strings.Join(tried, ", ") + t.via(),
		address: strings.Join(tried, ","), err: last}
}

func (t *netTarget) handshake(ctx context.Context) outcome {
	if t.proxy != nil {
		return outcome{status: Unknown, address: t.conn,
			message: "the endpoint is reached through the HTTP proxy " + t.proxy.Host + "; TLS to " + t.serverName + " is checked by the requests that follow"}
	}
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: dialTimeout}, Config: &tls.Config{ServerName: t.serverName}}
	c, err := d.DialContext(ctx, "tcp", t.conn)
	if err != nil {
		return outcome{status: Fail, message: "TLS handshake with " + t.serverName + " at " + t.conn + " failed", address: t.conn, err: err}
	}
	defer c.Close()
	st := c.(*tls.Conn).ConnectionState()
	msg := tls.VersionName(st.Version) + " with " + t.serverName
	if len(st.PeerCertificates) > 0 {
		leaf := st.PeerCertificates[0]
		msg += fmt.Sprintf(", certificate %q valid until %s", leaf.Subject.CommonName, leaf.NotAfter.UTC().Format(time.DateOnly))
	}
	return outcome{status: Pass, message: msg, address: t.conn}
}

// clockSkew compares the local clock with the Date header of an
// unauthenticated HEAD of the endpoint's root (any status will do).
// Signatures fail beyond a skew of minutes (AWS: 15), so more than max
// fails.
func clockSkew(ctx context.Context, endpoint *url.URL, max time.Duration) outcome {
	root := url.URL{Scheme: endpoint.Scheme, Host: endpoint.Host, Path: "/"}
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, root.String(), nil)
	if err != nil {
		return unknownErr("", err)
	}
	client := &http.Client{
		Timeout: 2 * dialTimeout,
		// A redirect's own Date is as good as the target's.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	sent := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return outcome{status: Unknown, message: "no HTTP answer from " + root.Host, address: root.Host, err: err}
	}
	resp.Body.Close()
	rtt := time.Since(sent)
	date, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		return outcome{status: Unknown, message: "the server sent no usable Date header", address: root.Host}
	}
	// Date has one-second resolution: the server's clock was in
	// [date, date+1s) when it answered, between sent and sent+rtt here.
	local := sent.Add(rtt / 2)
	skew := date.Add(500 * time.Millisecond).Sub(local)
	res := outcome{status: Pass, address: root.Host}
	abs := skew.Abs()
	switch {
	case abs <= time.Second:
		res.message = "within 1s of the server's clock"
	case skew > 0:
		res.message = fmt.Sprintf("the local clock is %s behind the server's", abs.Round(100*time.Millisecond))
	default:
		res.message = fmt.Sprintf("the local clock is %s ahead of the server's", abs.Round(100*time.Millisecond))
	}
	if abs > max {
		res.status, res.code = Fail, "CLOCK_SKEW"
		res.message += fmt.Sprintf(" (more than %s: signed requests are refused; sync the clock with NTP)", max)
	}
	return res
}
