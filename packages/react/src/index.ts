/**
 * @ferry/react: React bindings for @ferry/core. Components read state only through
 * {@link useFerryState}; none holds upload state of its own.
 */
export { Dashboard, type DashboardProps } from './components/Dashboard.tsx';
export { DropArea } from './components/DropArea.tsx';
export { FileList } from './components/FileList.tsx';
export { StatusBar } from './components/StatusBar.tsx';
export { FerryProvider, useFerry, useFerryState } from './context.tsx';
export { formatBytes } from './format.ts';
