import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The key and certificate files of the real API server's test PKI, all inside one temp dir. */
export interface ApiServerPki {
  /** Trusted by clients to verify the server (a CA of its own, separate from the client CA). */
  readonly servingCaPath: string;
  readonly servingCertPath: string;
  readonly servingKeyPath: string;
  /** `--client-ca-file`: every client certificate the harness issues chains to it. */
  readonly clientCaPath: string;
  readonly clientCaKeyPath: string;
  /** `--service-account-signing-key-file` (private) and `--service-account-key-file` (public). */
  readonly serviceAccountKeyPath: string;
  readonly serviceAccountPublicKeyPath: string;
}

/** A client certificate: the subject is what the API server authenticates the holder as. */
export interface ClientCertificate {
  readonly certPath: string;
  readonly keyPath: string;
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

async function openssl(dir: string, args: readonly string[]): Promise<void> {
  // No prompts (-subj everywhere); bounded so a wedged openssl cannot hang a test.
  await run('openssl', args, { cwd: dir, timeout: 10_000 });
}

async function selfSignedCa(dir: string, name: string, commonName: string): Promise<void> {
  await openssl(dir, [
    'req',
    '-x509',
    ...EC,
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.pem`,
    '-days',
    '2',
    '-subj',
    `/CN=${commonName}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
}

/** Issues `name`.pem/.key signed by the CA `ca`, with the extensions in section `extensions` of ext.cnf. */
async function issue(dir: string, ca: string, name: string, subject: string, extensions: string): Promise<void> {
  await openssl(dir, ['req', '-new', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject]);
  await openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}.pem`,
    '-CAkey',
    `${ca}.key`,
    // A random serial per certificate instead of a serial file, so issuing in parallel cannot race.
    '-set_serial',
    `0x${randomBytes(16).toString('hex')}`,
    '-days',
    '2',
    '-sha256',
    '-extfile',
    'ext.cnf',
    '-extensions',
    extensions,
    '-out',
    `${name}.pem`,
  ]);
}

const EXTENSIONS = `[ serving ]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1,DNS:localhost
[ client ]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = clientAuth
`;

/**
 * Makes the whole PKI in `dir`: a serving CA and a serving certificate for 127.0.0.1 (the only
 * address the server listens on), a client CA, and an EC service-account signing key.
 */
export async function createPki(dir: string): Promise<ApiServerPki> {
  await writeFile(join(dir, 'ext.cnf'), EXTENSIONS);
  await Promise.all([
    selfSignedCa(dir, 'serving-ca', 'agent-upgrade test kube-apiserver serving CA'),
    selfSignedCa(dir, 'client-ca', 'agent-upgrade test kube-apiserver client CA'),
    openssl(dir, ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'sa.key']),
  ]);
  await Promise.all([
    issue(dir, 'serving-ca', 'serving', '/CN=kube-apiserver', 'serving'),
    openssl(dir, ['ec', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']),
  ]);
  return {
    servingCaPath: join(dir, 'serving-ca.pem'),
    servingCertPath: join(dir, 'serving.pem'),
    servingKeyPath: join(dir, 'serving.key'),
    clientCaPath: join(dir, 'client-ca.pem'),
    clientCaKeyPath: join(dir, 'client-ca.key'),
    serviceAccountKeyPath: join(dir, 'sa.key'),
    serviceAccountPublicKeyPath: join(dir, 'sa.pub'),
  };
}

/**
 * Issues a client certificate for `user` in `groups` (CN and O, which is how the API server's
 * x509 authenticator reads a username and groups). `fileName` must be unique within `dir`.
 */
export async function issueClientCertificate(
  dir: string,
  fileName: string,
  user: string,
  groups: readonly string[],
): Promise<ClientCertificate> {
  const subject = [...groups.map((group) => `/O=${group}`), `/CN=${user}`].join('');
  await issue(dir, 'client-ca', fileName, subject, 'client');
  return { certPath: join(dir, `${fileName}.pem`), keyPath: join(dir, `${fileName}.key`) };
}
