import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Which server certificate to present. Every variant except `self-signed` is issued by the same
 * test CA, so a client that trusts `caPem` fails for exactly one reason per variant:
 *  - `valid`: SAN localhost + 127.0.0.1, valid now;
 *  - `wrong-host`: SAN `wrong-host.invalid` only (ERR_TLS_CERT_ALTNAME_INVALID);
 *  - `expired`: valid only during 2020-01-01 (CERT_HAS_EXPIRED);
 *  - `self-signed`: a leaf that signed itself, not the CA (DEPTH_ZERO_SELF_SIGNED_CERT).
 */
export type CertVariant = 'valid' | 'wrong-host' | 'expired' | 'self-signed';

export interface TlsMaterial {
  /** The test CA a client must pass as `ca` to trust the server. */
  readonly caPem: string;
  /** The server's leaf certificate for the requested variant. */
  readonly certPem: string;
  readonly keyPem: string;
}

type AllMaterial = Readonly<Record<CertVariant, TlsMaterial>>;

// Generated once per process (vitest forks a process per file) and kept in memory only: the
// temp dir is removed as soon as the PEMs are read, so no key material outlives generation.
let cached: Promise<AllMaterial> | undefined;

export function tlsMaterial(variant: CertVariant = 'valid'): Promise<TlsMaterial> {
  cached ??= generateAll();
  return cached.then((all) => all[variant]);
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
const LOOPBACK_SAN = 'subjectAltName=DNS:localhost,IP:127.0.0.1';

async function openssl(dir: string, args: readonly string[]): Promise<void> {
  // No prompts (-batch / -subj everywhere); bounded so a wedged openssl cannot hang a test.
  await run('openssl', args, { cwd: dir, timeout: 10_000 });
}

async function generateAll(): Promise<AllMaterial> {
  const dir = await mkdtemp(join(tmpdir(), 'hostile-tls-'));
  try {
    await createCa(dir);
    const valid = await issue(dir, 'valid', 'localhost', 'loopback', ['-days', '7']);
    const wrongHost = await issue(dir, 'wrong', 'wrong-host.invalid', 'wrong_host', ['-days', '7']);
    const expired = await issue(dir, 'expired', 'localhost', 'loopback', [
      '-startdate',
      '20200101000000Z',
      '-enddate',
      '20200102000000Z',
    ]);
    const selfSigned = await selfSign(dir);
    return { valid, 'wrong-host': wrongHost, expired, 'self-signed': selfSigned };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The test CA in `dir` (ca.pem, ca.key) and the `openssl ca` database and config it issues with. */
async function createCa(dir: string): Promise<void> {
  await openssl(dir, [
    'req',
    '-x509',
    ...EC,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '7',
    '-subj',
    '/CN=agent-upgrade hostile test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  await writeFile(join(dir, 'index.txt'), '');
  await writeFile(join(dir, 'serial'), '1000\n');
  await writeFile(join(dir, 'ca.cnf'), caConfig(dir));
}

// OpenSSL 3.0 (installed: 3.0.x) has no `-not_before/-not_after` on req/x509 (added in 3.4)
// and `-days` cannot be negative, but `openssl ca -startdate/-enddate` can back-date a cert,
// so every CA-issued leaf goes through `openssl ca` for one code path.
async function issue(
  dir: string,
  name: string,
  cn: string,
  ext: string,
  dates: readonly string[],
): Promise<TlsMaterial> {
  await openssl(dir, ['req', '-new', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`]);
  await openssl(dir, [
    'ca',
    '-batch',
    '-notext',
    '-config',
    'ca.cnf',
    '-extensions',
    ext,
    '-in',
    `${name}.csr`,
    '-out',
    `${name}.pem`,
    ...dates,
  ]);
  return read(dir, name);
}

/** A loopback leaf that signed itself, not the CA. */
async function selfSign(dir: string): Promise<TlsMaterial> {
  await openssl(dir, [
    'req',
    '-x509',
    ...EC,
    '-keyout',
    'self.key',
    '-out',
    'self.pem',
    '-days',
    '7',
    '-subj',
    '/CN=localhost',
    '-addext',
    LOOPBACK_SAN,
  ]);
  return read(dir, 'self');
}

async function read(dir: string, name: string): Promise<TlsMaterial> {
  const [caPem, certPem, keyPem] = await Promise.all([
    readFile(join(dir, 'ca.pem'), 'utf8'),
    readFile(join(dir, `${name}.pem`), 'utf8'),
    readFile(join(dir, `${name}.key`), 'utf8'),
  ]);
  return { caPem, certPem, keyPem };
}

function caConfig(dir: string): string {
  return `[ ca ]
default_ca = test_ca
[ test_ca ]
dir = ${dir}
database = ${dir}/index.txt
new_certs_dir = ${dir}
serial = ${dir}/serial
certificate = ${dir}/ca.pem
private_key = ${dir}/ca.key
default_md = sha256
policy = any_policy
unique_subject = no
copy_extensions = none
[ any_policy ]
commonName = supplied
[ loopback ]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
${LOOPBACK_SAN}
[ wrong_host ]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:wrong-host.invalid
`;
}
