package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// pki is the cluster's certificate authority; it lives only as long as "up".
type pki struct {
	dir    string
	caCert *x509.Certificate
	caKey  crypto.Signer
	caPEM  []byte
}

func newPKI(dir string) (*pki, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := certTemplate("labcluster-ca", nil)
	tmpl.IsCA = true
	tmpl.BasicConstraintsValid = true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	p := &pki{dir: dir, caCert: cert, caKey: key, caPEM: pemBlock("CERTIFICATE", der)}
	return p, os.WriteFile(filepath.Join(dir, "ca.crt"), p.caPEM, 0o644)
}

func certTemplate(cn string, orgs []string) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(10 * 365 * 24 * time.Hour),
	}
}

// issue signs a leaf certificate and returns its certificate and key PEM.
func (p *pki) issue(cn string, orgs []string, server bool) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := certTemplate(cn, orgs)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.DNSNames = []string{"localhost", "kubernetes", "kubernetes.default",
			"kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, key.Public(), p.caKey)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pemBlock("CERTIFICATE", der), pemBlock("PRIVATE KEY", keyDER), nil
}

// writeServing writes the API server's serving certificate as NAME.crt/.key.
func (p *pki) writeServing(name string) error {
	cert, key, err := p.issue("kube-apiserver", nil, true)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(p.dir, name+".crt"), cert, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(p.dir, name+".key"), key, 0o600)
}

// writeServiceAccountKeys writes the token signing key pair sa.key/sa.pub.
func (p *pki) writeServiceAccountKeys() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(p.dir, "sa.pub"), pemBlock("PUBLIC KEY", pub), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(p.dir, "sa.key"),
		pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key)), 0o600)
}

// writeKubeconfig writes a kubeconfig with an embedded client certificate.
func (p *pki) writeKubeconfig(path, server, user string, groups []string) error {
	cert, key, err := p.issue(user, groups, false)
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["labcluster"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: p.caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts["labcluster"] = &clientcmdapi.Context{Cluster: "labcluster", AuthInfo: user}
	cfg.CurrentContext = "labcluster"
	return clientcmd.WriteToFile(*cfg, path)
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
