// Preloaded with NODE_OPTIONS=--require: makes npm believe it runs on FAKE_PLATFORM ("darwin-arm64", "win32-x64", ...),
// so `npm ci` checks the lockfile's os/cpu fields as it would on that machine. npm's own --os/--cpu flags do not.
const [platform, arch] = (process.env.FAKE_PLATFORM ?? '').split('-');
if (!platform || !arch) throw new Error('FAKE_PLATFORM must be <platform>-<arch>, e.g. darwin-arm64');
Object.defineProperty(process, 'platform', { value: platform });
Object.defineProperty(process, 'arch', { value: arch });
