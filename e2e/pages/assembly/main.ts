/**
 * The Dashboard with `assembly`, for the processing end-to-end spec: files go through ferry's
 * Assembly API on this page's origin. `signAssembly` stands for the application's signing
 * endpoint; the spec provides it (it holds the secret, the page never does). `window.ferry`
 * lets the spec read file records.
 */
import { Ferry } from '@ferry/core';
import { Dashboard, FerryProvider } from '@ferry/react';
import '@ferry/react/styles.css';
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';

declare global {
  interface Window {
    signAssembly(): Promise<{ params: string; signature: string }>;
    ferry?: Ferry;
  }
}

const ferry = new Ferry({ assembly: { params: () => window.signAssembly(), service: location.origin } });
window.ferry = ferry;
const root = document.getElementById('root');
if (root) createRoot(root).render(createElement(FerryProvider, { ferry, children: createElement(Dashboard) }));
