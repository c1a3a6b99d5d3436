// Command kube-apiserver is the upstream kube-apiserver, built from the k8s.io/kubernetes module
// at the version go.mod pins, for the test suite's real-API-server tests.
package main

import (
	"os"
	_ "time/tzdata" // the upstream binary carries the zone database; keep it identical

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // --logging-format=json, as upstream
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics, as upstream
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric, as upstream
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
