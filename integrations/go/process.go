package appleidmock

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// How many of the mock's stderr lines are kept (the newest).
const stderrLines = 2000

type config struct {
	binary        string
	scenario      Object
	scenarioPath  string
	serveArgs     []string
	ca            string
	controlToken  string
	notifications bool
	timeout       time.Duration
}

// Option is one of Start's or Attach's choices.
type Option func(*config)

// Binary is the appleid-mock binary to run (default APPLEID_MOCK_BIN, then PATH).
func Binary(path string) Option { return func(c *config) { c.binary = path } }

// Scenario is the scenario to serve, as an object (default the built-in one).
func Scenario(scenario Object) Option { return func(c *config) { c.scenario = scenario } }

// ScenarioFile is the scenario to serve, as a JSON file.
func ScenarioFile(path string) Option { return func(c *config) { c.scenarioPath = path } }

// ServeArgs are further arguments of `appleid-mock serve` (e.g. --tls-cert, --tls-key).
func ServeArgs(args ...string) Option {
	return func(c *config) { c.serveArgs = append(c.serveArgs, args...) }
}

// CA is the PEM text or path of an https mock's CA.
func CA(pemOrPath string) Option { return func(c *config) { c.ca = pemOrPath } }

// ControlToken is the bearer token of a mock whose control API asks for one.
func ControlToken(token string) Option { return func(c *config) { c.controlToken = token } }

// WithoutNotifications starts no receiver (Mock.Notifications is nil).
func WithoutNotifications() Option { return func(c *config) { c.notifications = false } }

// Timeout bounds the health wait and each request (default 30 s).
func Timeout(timeout time.Duration) Option { return func(c *config) { c.timeout = timeout } }

func configure(options []Option) *config {
	c := &config{notifications: true, timeout: 30 * time.Second}
	for _, option := range options {
		option(c)
	}
	return c
}

// Start runs `appleid-mock serve --port 0` for the test, with a verified notification receiver
// wired into the scenario, and answers it once healthy; t.Cleanup stops it. A mock that cannot
// start fails the test (t.Fatal) with the mock's words.
func Start(t testing.TB, options ...Option) *Mock {
	t.Helper()
	mock, err := StartProcess(options...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if status, err := mock.Stop(); err != nil || status != 0 {
			t.Errorf("appleid-mock stopped with status %d: %v\n%s", status, err, strings.Join(mock.Logs(), "\n"))
		}
	})
	return mock
}

// StartProcess is Start without a test: for TestMain, or one mock shared by a package's tests.
// Call Stop when done; the mock also dies with the test process.
func StartProcess(options ...Option) (*Mock, error) {
	c := configure(options)
	binary, err := FindBinary(c.binary)
	if err != nil {
		return nil, err
	}
	scenario, err := loadScenario(binary, c)
	if err != nil {
		return nil, err
	}
	var receiver *Receiver
	if c.notifications {
		if receiver, err = NewReceiver(); err != nil {
			return nil, err
		}
		scenario = wireReceiver(scenario, receiver.URL)
	}
	directory, err := os.MkdirTemp("", "appleid-mock-")
	if err == nil {
		var data []byte
		if data, err = json.MarshalIndent(scenario, "", "  "); err == nil {
			err = os.WriteFile(filepath.Join(directory, "scenario.json"), data, 0o600)
		}
	}
	if err != nil {
		if receiver != nil {
			_ = receiver.Close()
		}
		if directory != "" {
			_ = os.RemoveAll(directory)
		}
		return nil, &Error{Message: fmt.Sprintf("the scenario could not be written: %v", err)}
	}
	p, err := spawn(binary, append([]string{"serve", "--port", "0", "--scenario", filepath.Join(directory, "scenario.json")}, c.serveArgs...), c.controlToken)
	if err != nil {
		_ = os.RemoveAll(directory)
		if receiver != nil {
			_ = receiver.Close()
		}
		return nil, err
	}
	p.directory, p.receiver = directory, receiver
	fail := func(err error) (*Mock, error) {
		p.kill()
		return nil, err
	}
	var listening string
	var ok bool
	select {
	case listening, ok = <-p.listening:
	case <-time.After(c.timeout):
		return fail(&Error{Message: fmt.Sprintf("appleid-mock serve printed nothing within %v (%s %s):\n%s", c.timeout, binary, strings.Join(p.command.Args[1:], " "), strings.Join(p.logs(), "\n"))})
	}
	if !ok {
		// Its first line was not "listening on …": a refused scenario exits at once, with its reasons.
		select {
		case <-p.exited:
			return fail(&Error{Message: fmt.Sprintf("appleid-mock serve exited %d before listening (%s %s):\n%s", p.status, binary, strings.Join(p.command.Args[1:], " "), strings.Join(p.logs(), "\n"))})
		case <-time.After(5 * time.Second):
			return fail(&Error{Message: fmt.Sprintf("appleid-mock serve did not say it was listening (%s %s):\n%s", binary, strings.Join(p.command.Args[1:], " "), strings.Join(p.logs(), "\n"))})
		}
	}
	mock, err := newMock(listening, c)
	if err != nil {
		return fail(err)
	}
	mock.Scenario, mock.process, mock.Notifications = scenario, p, receiver
	if receiver != nil {
		receiver.Attach(mock)
	}
	if err := mock.waitUntilHealthy(c.timeout, p.alive); err != nil {
		return fail(err)
	}
	return mock, nil
}

// Attach drives a mock something else runs (the GitHub Action, compose, a container) at url,
// once healthy; nothing to stop. Options: CA, ControlToken, Scenario or ScenarioFile (the
// defaults of ClientSecret and AuthorizeWeb), Timeout.
func Attach(t testing.TB, url string, options ...Option) *Mock {
	t.Helper()
	mock, err := AttachURL(url, options...)
	if err != nil {
		t.Fatal(err)
	}
	return mock
}

// AttachURL is Attach without a test.
func AttachURL(url string, options ...Option) (*Mock, error) {
	c := configure(options)
	if c.scenarioPath != "" {
		scenario, err := loadScenario("", c)
		if err != nil {
			return nil, err
		}
		c.scenario = scenario
	}
	mock, err := newMock(url, c)
	if err != nil {
		return nil, err
	}
	if err := mock.waitUntilHealthy(c.timeout, nil); err != nil {
		return nil, err
	}
	return mock, nil
}

// Stop ends a mock Start ran: SIGTERM, then its exit status (0 for a clean stop); SIGKILL after
// 20 s. The receiver closes and the scenario's temporary directory goes. A second Stop, or Stop
// of an attached mock, does nothing.
func (m *Mock) Stop() (int, error) {
	if m.process == nil {
		return 0, nil
	}
	return m.process.stop(20 * time.Second)
}

// PID is the process id of a mock Start ran (0 for an attached one).
func (m *Mock) PID() int {
	if m.process == nil {
		return 0
	}
	return m.process.command.Process.Pid
}

// FindBinary is the appleid-mock binary: explicit, else APPLEID_MOCK_BIN, else appleid-mock on PATH.
func FindBinary(explicit string) (string, error) {
	named := explicit
	if named == "" {
		named = os.Getenv("APPLEID_MOCK_BIN")
	}
	if named != "" {
		if !isExecutable(named) {
			return "", &Error{Message: fmt.Sprintf("the appleid-mock binary %s is not an executable file", named)}
		}
		return named, nil
	}
	if found, err := exec.LookPath("appleid-mock"); err == nil {
		return found, nil
	}
	return "", &Error{Message: "no appleid-mock binary: give the Binary option or APPLEID_MOCK_BIN, or put appleid-mock on PATH (a release tarball, or `swift build` in a checkout)"}
}

func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0
}

// wireReceiver is a copy of scenario whose teams without a notification_url send theirs to url.
func wireReceiver(scenario Object, url string) Object {
	var wired Object
	data, _ := json.Marshal(scenario)
	_ = json.Unmarshal(data, &wired)
	// A malformed scenario goes to the mock as it is: its refusal says what is wrong.
	teams, _ := wired["teams"].([]any)
	for _, team := range teams {
		if object, ok := team.(Object); ok {
			if current, _ := object["notification_url"].(string); current == "" {
				object["notification_url"] = url
			}
		}
	}
	return wired
}

func loadScenario(binary string, c *config) (Object, error) {
	if c.scenario != nil {
		return c.scenario, nil
	}
	var data []byte
	var err error
	if c.scenarioPath != "" {
		if data, err = os.ReadFile(c.scenarioPath); err != nil {
			return nil, &Error{Message: fmt.Sprintf("the scenario %s: %v", c.scenarioPath, err)}
		}
	} else {
		command := exec.Command(binary, "scenario", "print")
		command.Env = mockEnvironment("")
		var stderr strings.Builder
		command.Stderr = &stderr
		if data, err = command.Output(); err != nil {
			return nil, &Error{Message: fmt.Sprintf("%s scenario print failed: %v %s", binary, err, strings.TrimSpace(stderr.String()))}
		}
	}
	var scenario Object
	if err := json.Unmarshal(data, &scenario); err != nil {
		return nil, &Error{Message: fmt.Sprintf("the scenario %s is not a JSON object: %v", c.scenarioPath, err)}
	}
	return scenario, nil
}

// The mock's environment: the test's, without APPLEID_MOCK_* settings that would change what
// the kit asked for, and with the control token when given.
func mockEnvironment(token string) []string {
	var environment []string
	for _, entry := range os.Environ() {
		if !strings.HasPrefix(entry, "APPLEID_MOCK_") {
			environment = append(environment, entry)
		}
	}
	if token != "" {
		environment = append(environment, "APPLEID_MOCK_CONTROL_TOKEN="+token)
	}
	return environment
}

// process is `appleid-mock serve` as a child: its first stdout line, its stderr kept.
type process struct {
	command   *exec.Cmd
	listening chan string
	exited    chan struct{}
	status    int
	directory string
	receiver  *Receiver
	mu        sync.Mutex
	stderr    []string
	stopOnce  sync.Once
}

func spawn(binary string, args []string, token string) (*process, error) {
	command := exec.Command(binary, args...)
	command.Env = mockEnvironment(token)
	command.SysProcAttr = mockProcessAttributes()
	stdout, err := command.StdoutPipe()
	if err != nil {
		return nil, &Error{Message: err.Error()}
	}
	stderr, err := command.StderrPipe()
	if err != nil {
		return nil, &Error{Message: err.Error()}
	}
	if err := command.Start(); err != nil {
		return nil, &Error{Message: fmt.Sprintf("%s cannot be run: %v", binary, err)}
	}
	p := &process{command: command, listening: make(chan string, 1), exited: make(chan struct{})}
	var reading sync.WaitGroup
	reading.Add(2)
	go func() {
		defer reading.Done()
		lines := bufio.NewScanner(stderr)
		lines.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for lines.Scan() {
			p.mu.Lock()
			p.stderr = append(p.stderr, lines.Text())
			if len(p.stderr) > stderrLines {
				p.stderr = p.stderr[1:]
			}
			p.mu.Unlock()
		}
		// A line over 1 MiB ends the scan: the rest is read and dropped, so the mock never blocks.
		_, _ = io.Copy(io.Discard, stderr)
	}()
	go func() {
		defer reading.Done()
		lines := bufio.NewReader(stdout)
		first, err := lines.ReadString('\n')
		if err == nil && strings.HasPrefix(first, "listening on ") {
			p.listening <- strings.TrimSpace(strings.TrimPrefix(first, "listening on "))
		}
		close(p.listening)
		// The rest of stdout is read and dropped, so the mock never blocks on a full pipe.
		_, _ = io.Copy(io.Discard, lines)
	}()
	go func() {
		reading.Wait()
		_ = command.Wait()
		p.status = exitStatus(command.ProcessState)
		close(p.exited)
	}()
	return p, nil
}

func exitStatus(state *os.ProcessState) int {
	if status, ok := state.Sys().(syscall.WaitStatus); ok && status.Signaled() {
		return 128 + int(status.Signal())
	}
	return state.ExitCode()
}

func (p *process) logs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.stderr...)
}

func (p *process) alive() error {
	select {
	case <-p.exited:
		return &Error{Message: fmt.Sprintf("appleid-mock exited %d:\n%s", p.status, strings.Join(p.logs(), "\n"))}
	default:
		return nil
	}
}

func (p *process) stop(timeout time.Duration) (int, error) {
	p.stopOnce.Do(func() {
		_ = p.command.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(timeout):
			_ = p.command.Process.Kill()
			<-p.exited
		}
		p.cleanUp()
	})
	return p.status, nil
}

// kill ends a mock that never became healthy: the caller gets no object to stop.
func (p *process) kill() {
	p.stopOnce.Do(func() {
		_ = p.command.Process.Kill()
		<-p.exited
		p.cleanUp()
	})
}

func (p *process) cleanUp() {
	if p.receiver != nil {
		_ = p.receiver.Close()
	}
	_ = os.RemoveAll(p.directory)
}
