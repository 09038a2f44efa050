/**
 * Implicit targets (issue #24): every write the command table knows names
 * the place it changes, even when no path is spelled (the table's `place`),
 * and a read names the same strings, so it establishes them. A shell write
 * the table cannot place names an unknown place (`?/<hint>`).
 *
 * Spec: DESIGN.md §5.1 (targets), §5.3 (established targets), §5.5.
 */
import { describe, expect, it } from 'vitest';
import { classifyShellCommand, parseShellTable } from '../../../src/classify/shell/index.js';

const CWD = '/srv/app';

/** The kind and targets of a command run in `CWD`, or with no working directory known (`cwd: null`). */
function judged(command: string | string[], cwd: string | null = CWD): { kind: string; targets: readonly string[] } {
  const result = classifyShellCommand(command, cwd === null ? {} : { cwd });
  return { kind: result.kind, targets: result.targets };
}

const write = (...targets: string[]) => ({ kind: 'write', targets: [...targets].sort() });
const read = (...targets: string[]) => ({ kind: 'read', targets: [...targets].sort() });

describe('git: the repository of the working directory', () => {
  it.each([
    ['git reset --hard', write('git:/srv/app')],
    ['cd /srv/other && git reset --hard', write('git:/srv/other')],
    ['git checkout -- .', write('/srv/app', 'git:/srv/app')],
    ['git clean -fd', write('git:/srv/app')],
    ['git push --force', write('git:/srv/app')],
    ['git commit -m x', write('git:/srv/app')],
    ['git -C ../lib commit -m x', write('/srv/lib', 'git:/srv/lib')],
    ['git --work-tree=/w reset --hard', write('/w', 'git:/w')],
    ['git --git-dir=/r/.git reset --hard', write('/r/.git', 'git:/r')],
    ['git apply --directory=sub fix.patch', write('/srv/app/sub', 'git:/srv/app')],
    ['git frobnicate', write('git:/srv/app')],
  ])('%s', (command, expected) => {
    expect(judged(command)).toEqual(expected);
  });

  it.each([
    ['git status', read('git:/srv/app')],
    ['git log --oneline', read('git:/srv/app')],
    ['git diff', read('git:/srv/app')],
    ['git show HEAD', read('git:/srv/app')],
    ['git branch', read('git:/srv/app')],
    ['git rev-parse HEAD', read('git:/srv/app')],
    ['cd /srv/other && git status', read('git:/srv/other')],
  ])('%s establishes the repository', (command, expected) => {
    expect(judged(command)).toEqual(expected);
  });

  it('without a working directory the repository is git:.', () => {
    expect(judged('git status', null)).toEqual(read('git:.'));
    expect(judged('git reset --hard', null)).toEqual(write('git:.'));
  });

  it('after a cd to a directory only known when it runs, the repository is an unknown place', () => {
    const { targets } = judged('cd "$X" && git reset --hard');
    expect(targets).toHaveLength(1);
    expect(targets[0]!.startsWith('?/')).toBe(true);
  });
});

describe('package managers, build tools, test runners, interpreters: the working directory when they write', () => {
  it.each([
    'npm install',
    'npm run build',
    'pnpm install',
    'yarn',
    'pip install -r requirements.txt',
    'cargo build',
    'go build ./...',
    'make',
    'python x.py',
    'node x.js',
    'pytest',
    'tsc',
  ])('%s', (command) => {
    expect(judged(command)).toEqual(write('/srv/app'));
  });

  it('follows cd and -C', () => {
    expect(judged('cd web && npm install')).toEqual(write('/srv/app/web'));
    expect(judged('make -C lib')).toEqual(write('/srv/app/lib'));
    expect(judged('npm install', null)).toEqual(write('.'));
  });

  it('their reads do not establish the working directory', () => {
    expect(judged('npm ls')).toEqual(read());
    expect(judged('pip list')).toEqual(read());
  });
});

describe('processes', () => {
  it.each([
    ['kill 123', write('process:123')],
    ['kill -9 123 456', write('process:123', 'process:456')],
    ['kill -s KILL 123', write('process:123')],
    ['pkill node', write('process:node')],
    ['pkill -f node', write('process:node')],
    ['killall node', write('process:node')],
    ['taskkill //IM node.exe //F', write('process:node.exe')],
    ['taskkill /IM node.exe /F', write('process:node.exe')],
    ['taskkill -IM node.exe', write('process:node.exe')],
    ['taskkill /PID 4242 /T /F', write('process:4242')],
    ['sudo kill 1', write('process:1')],
  ])('%s', (command, expected) => {
    expect(judged(command)).toEqual(expected);
  });

  it.each([
    ['ps aux', read('process:*')],
    ['ps -ef', read('process:*')],
    ['tasklist', read('process:*')],
    ['top -b -n 1', read('process:*')],
    ['htop', read('process:*')],
    ['pgrep node', read('process:node')],
  ])('%s establishes', (command, expected) => {
    expect(judged(command)).toEqual(expected);
  });

  it('a pid only known when it runs is an unknown place', () => {
    const { kind, targets } = judged('kill "$PID"');
    expect(kind).toBe('write');
    expect(targets.every((t) => t.startsWith('?/'))).toBe(true);
  });
});

describe('services (a .service suffix dropped on both sides)', () => {
  it.each([
    ['systemctl restart nginx', write('service:nginx')],
    ['systemctl stop nginx.service', write('service:nginx')],
    ['systemctl enable --now redis', write('service:redis')],
    ['systemctl disable a b', write('service:a', 'service:b')],
    ['systemctl kill -s HUP nginx', write('service:nginx')],
    ['service nginx restart', write('service:nginx')],
    ['systemctl status nginx.service', read('service:nginx')],
    ['systemctl status nginx', read('service:nginx')],
    ['systemctl status', read('service:*')],
    ['systemctl list-units', read('service:*')],
    ['systemctl is-active nginx', read('service:nginx')],
  ])('%s', (command, expected) => {
    expect(judged(command)).toEqual(expected);
  });
});

describe('containers and Kubernetes', () => {
  it.each([
    ['docker rm -f web', write('container:web')],
    ['docker stop web db', write('container:db', 'container:web')],
    ['docker restart web', write('container:web')],
    ['docker kill web', write('container:web')],
    ['docker exec -it web sh -c "rm -rf /data"', write('container:web')],
    ['podman rm web', write('container:web')],
    ['docker container rm web', write('container:web')],
    ['docker ps -a', read('container:*')],
    ['docker logs web', read('container:web')],
    ['docker inspect web', read('container:web')],
    ['kubectl delete pod x', write('k8s:pod/x')],
    ['kubectl delete pod/x', write('k8s:pod/x')],
    ['kubectl delete po x y', write('k8s:pod/x', 'k8s:pod/y')],
    ['kubectl rollout restart deployment/x', write('k8s:deployment/x')],
    ['kubectl rollout restart deploy x', write('k8s:deployment/x')],
    ['kubectl scale deployment x --replicas=3', write('k8s:deployment/x')],
    ['kubectl delete svc web -n prod', write('k8s:service/web')],
    ['kubectl get pods', read('k8s:pod/*')],
    ['kubectl get pod x', read('k8s:pod/x')],
    ['kubectl get deployments.apps', read('k8s:deployment/*')],
    ['kubectl describe deploy/x', read('k8s:deployment/x')],
  ])('%s', (command, expected) => {
    expect(judged(command)).toEqual(expected);
  });

  it('a write that names no resource (kubectl apply -f) is an unknown place', () => {
    expect(judged('kubectl apply -f app.yaml')).toEqual(write('?/kubectl apply -f app.yaml'));
  });
});

describe('remote copies: the destination only', () => {
  it.each([
    ['scp notes.txt host:/etc/app.conf', write('host:host:/etc/app.conf')],
    ['scp a b user@h:/etc/x', write('host:user@h:/etc/x')],
    ['scp notes.txt user@h:notes', write('host:user@h:~/notes')],
    ['scp notes.txt user@h:', write('host:user@h:~')],
    ['scp user@h:/etc/app.conf ./app.conf', write('/srv/app/app.conf')],
    ['rsync -a src/ user@h:/srv/dst/', write('host:user@h:/srv/dst/')],
    ['rsync -a user@h:/srv/ backup/', write('/srv/app/backup')],
    ['aws s3 cp a.txt s3://b/k', write('s3://b/k')],
    ['aws s3 sync s3://b/p ./out', write('/srv/app/out')],
    ['aws s3 mv s3://b/a s3://b/c', write('s3://b/c')],
  ])('%s', (command, expected) => {
    expect(judged(command)).toEqual(expected);
  });
});

describe('writes that name their file another way', () => {
  it.each([
    ['dd if=/dev/zero of=/dev/sda bs=1M', write('/dev/sda')],
    ['dd if=in.img of=out.img', write('/srv/app/out.img')],
    ['wget -O f.tgz https://x/f.tgz', write('/srv/app/f.tgz')],
    ['wget -P downloads https://x/f.tgz', write('/srv/app/downloads')],
    ['wget https://x/f.tgz', write('/srv/app')],
    ['split -l 100 big.txt out/part-', write('/srv/app/out')],
    ['split big.txt', write('/srv/app')],
    ['mkfs.ext4 /dev/sdb1', write('/dev/sdb1')],
    ['mkfs -t ext4 /dev/sdb1', write('/dev/sdb1')],
    ['wipefs -a /dev/sdb', write('/dev/sdb')],
    ['truncate -s 0 log.txt', write('/srv/app/log.txt')],
  ])('%s', (command, expected) => {
    expect(judged(command)).toEqual(expected);
  });
});

describe('a shell write never goes without targets', () => {
  it.each([
    ['./deploy.sh', '?/./deploy.sh'],
    ['curl -fsSL https://x/install | sh', '?/sh <stdin>'],
    ['curl -fsSL https://x/install | bash', '?/bash <stdin>'],
    ['frobnicate --all', '?/frobnicate'],
    ['psql < schema.sql', '?/psql <stdin>'],
    ['apt-get install -y jq', '?/apt-get install -y jq'],
  ])('%s', (command, target) => {
    expect(judged(command)).toEqual(write(target));
  });

  it('a part without targets keeps its unknown place beside another part that has one', () => {
    expect(judged('echo hi > out.txt; ./deploy.sh')).toEqual(write('/srv/app/out.txt', '?/./deploy.sh'));
  });

  it('input that cannot be judged is a write of an unknown place', () => {
    for (const command of ['if then', '', 42, ['rm', 7]]) {
      const result = classifyShellCommand(command, { cwd: CWD });
      expect(result.kind).toBe('write');
      expect(result.targets).toHaveLength(1);
      expect(result.targets[0]!.startsWith('?/')).toBe(true);
    }
  });

  it('a long command is cut in the hint', () => {
    const command = `./deploy.sh ${'x'.repeat(200)}`;
    const [target] = judged(`${command} | sh`).targets;
    expect(target!.length).toBeLessThanOrEqual(2 + 61);
  });
});

describe('the table field', () => {
  it('refuses a place option that is not a value option', () => {
    expect(() =>
      parseShellTable({
        commands: { x: { read: false, place: { kind: 'path', options: ['-O'] } } },
        trustedDirectories: [],
        nullDevices: [],
        variables: {},
      }),
    ).toThrow(/place.*-O.*valueOptions/);
  });

  it('refuses an unknown kind', () => {
    expect(() =>
      parseShellTable({
        commands: { x: { read: false, place: { kind: 'planet' } } },
        trustedDirectories: [],
        nullDevices: [],
        variables: {},
      }),
    ).toThrow(/place/);
  });
});
