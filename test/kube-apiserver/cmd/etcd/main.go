// Command etcd runs a single-member etcd through go.etcd.io/etcd/server/v3/embed, at the version
// the test kube-apiserver's release pairs with. Loopback only, plain HTTP: it is reached by the
// kube-apiserver on the same machine and by nothing else.
//
// Usage: etcd -data-dir DIR -client-port N -peer-port N
package main

import (
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	dataDir := flag.String("data-dir", "", "directory for the member's data (required)")
	clientPort := flag.Int("client-port", 0, "loopback port for clients (required)")
	peerPort := flag.Int("peer-port", 0, "loopback port for the (unused) peer listener (required)")
	readyTimeout := flag.Duration("ready-timeout", 60*time.Second, "give up when the member is not ready by then")
	flag.Parse()
	if *dataDir == "" || *clientPort == 0 || *peerPort == 0 {
		flag.Usage()
		os.Exit(2)
	}

	cfg := embed.NewConfig()
	cfg.Name = "test"
	cfg.Dir = *dataDir
	cfg.LogLevel = "warn"
	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", *clientPort)}
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", *peerPort)}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// A test member is thrown away with its temp dir: fsync buys nothing and costs seconds.
	cfg.UnsafeNoFsync = true

	server, err := embed.StartEtcd(cfg)
	if err != nil {
		log.Fatalf("etcd: start: %v", err)
	}
	defer server.Close()
	select {
	case <-server.Server.ReadyNotify():
		fmt.Printf("etcd: ready on %s\n", client.String())
	case <-time.After(*readyTimeout):
		log.Fatalf("etcd: not ready after %s", *readyTimeout)
	}

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	select {
	case err := <-server.Err():
		log.Fatalf("etcd: %v", err)
	case <-signals:
	}
}
