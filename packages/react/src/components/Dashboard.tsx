/** The full upload UI: drop area, file list and status bar in one box. */
import { DropArea } from './DropArea.tsx';
import { FileList } from './FileList.tsx';
import { StatusBar } from './StatusBar.tsx';

export interface DashboardProps {
  /** Render in the page flow (the only mode so far). */
  inline?: boolean;
  width?: number | string;
  height?: number | string;
}

export function Dashboard({ width = 750, height = 550 }: DashboardProps) {
  return (
    <section className="ferry-dashboard" style={{ width, height }} aria-label="File upload">
      <DropArea />
      <FileList />
      <StatusBar />
    </section>
  );
}
